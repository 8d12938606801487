// The standalone agent's link to the control plane over GraphQL: registers the node, heartbeats
// (re-registering when the control plane does not know it), sends signals as `signal`
// envelopes, and follows the nodeCommands subscription (SSE over fetch), reconnecting as needed.
import type { Logger } from 'pino';
import { z } from 'zod';
import type { NodeSignal } from '../schema/agent.ts';
import { CONTROL_PLANE_ID, Envelope } from '../schema/envelope.ts';
import {
  HEARTBEAT, NODE_COMMANDS, NODE_SIGNAL, NodeCommand, NodeState, REGISTER_NODE, signalEnvelope,
  type NodeRegistration, type NodeStatus,
} from '../schema/node.ts';

export interface NodeLinkOptions {
  /** Control plane base URL; GraphQL at /graphql. */
  controlUrl: string;
  nodeId: string;
  /** The node credential (audience caravan-node), fresh enough for the next request. */
  token: () => Promise<string>;
  registration: () => NodeRegistration;
  /** Sessions routed through this agent now (sent with each heartbeat). */
  routes: () => number;
  heartbeatMs: number;
  onCommand: (command: NodeCommand, envelope: Envelope) => void;
  log: Logger;
  /** Pause before reconnecting the subscription or retrying registration; default 1 s. */
  retryMs?: number;
  fetch?: typeof fetch;
}

export interface NodeLink {
  /** Registers (retrying in the background if the control plane is not reachable yet). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends signals (ATTACHED, IDLE, BYTES) as one `signal` envelope. */
  signal(list: NodeSignal[]): Promise<void>;
  status(): NodeStatus | undefined;
}

const GraphQLAnswer = z.object({
  data: z.record(z.string(), z.unknown()).nullish(),
  errors: z.array(z.looseObject({ message: z.string(), extensions: z.looseObject({ code: z.string().optional() }).optional() })).optional(),
});

class ControlPlaneError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

export function createNodeLink(opts: NodeLinkOptions): NodeLink {
  const endpoint = `${opts.controlUrl.replace(/\/+$/, '')}/graphql`;
  const doFetch = opts.fetch ?? fetch;
  const retryMs = opts.retryMs ?? 1_000;
  const log = opts.log.child({ component: 'node-link' });
  const stopping = new AbortController();
  let status: NodeStatus | undefined;
  let registered = false;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let subscription: Promise<void> | undefined;
  let registering: Promise<boolean> | undefined;

  async function send(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await doFetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${await opts.token()}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.any([AbortSignal.timeout(10_000), stopping.signal]),
    });
    const text = await res.text();
    const body = GraphQLAnswer.safeParse((() => { try { return JSON.parse(text); } catch { return undefined; } })());
    if (body.success && body.data.errors?.length) {
      throw new ControlPlaneError(`control plane: ${body.data.errors.map((e) => e.message).join('; ')}`, body.data.errors[0]?.extensions?.code);
    }
    if (!res.ok || !body.success || !body.data.data) throw new ControlPlaneError(`control plane answered HTTP ${res.status}: ${text.slice(0, 200)}`);
    return body.data.data;
  }

  async function register(): Promise<boolean> {
    try {
      const data = await send(REGISTER_NODE, { input: opts.registration() });
      status = NodeState.parse(data.registerNode).status;
      if (!registered) log.info({ status }, 'node registered with the control plane');
      registered = true;
      return true;
    } catch (err) {
      if (!stopping.signal.aborted) log.warn({ err: (err as Error).message }, 'registering the node failed; retrying');
      return false;
    }
  }

  function registerOnce(): Promise<boolean> {
    registering ??= register().finally(() => { registering = undefined; });
    return registering;
  }

  async function beat(): Promise<void> {
    if (!registered) {
      await registerOnce();
      return;
    }
    try {
      const data = await send(HEARTBEAT, { input: { nodeId: opts.nodeId, routes: opts.routes() } });
      const next = NodeState.parse(data.heartbeat).status;
      if (next !== status) log.info({ from: status, to: next }, 'node status changed');
      status = next;
    } catch (err) {
      if (stopping.signal.aborted) return;
      if (err instanceof ControlPlaneError && err.code === 'NotFound') {
        registered = false;
        await registerOnce();
      } else {
        log.warn({ err: (err as Error).message }, 'heartbeat failed');
      }
    }
  }

  function scheduleBeat(): void {
    if (stopping.signal.aborted) return;
    heartbeatTimer = setTimeout(() => void beat().finally(scheduleBeat), opts.heartbeatMs);
  }

  function handle(data: string): void {
    const answer = GraphQLAnswer.parse(JSON.parse(data));
    if (answer.errors?.length) throw new ControlPlaneError(`command subscription: ${answer.errors.map((e) => e.message).join('; ')}`, answer.errors[0]?.extensions?.code);
    const envelope = Envelope.safeParse(answer.data?.nodeCommands);
    if (!envelope.success) {
      log.warn({ issues: envelope.error.issues.length }, 'ignored a malformed command envelope');
      return;
    }
    const e = envelope.data;
    const command = NodeCommand.safeParse(e.payload.structured);
    if (e.kind !== 'handoff' || e.fromNodeId !== CONTROL_PLANE_ID || e.toNodeId !== opts.nodeId || !command.success) {
      log.warn({ kind: e.kind, from: e.fromNodeId, to: e.toNodeId }, 'ignored a command envelope not meant for this node');
      return;
    }
    opts.onCommand(command.data, e);
  }

  /** One SSE connection to nodeCommands; returns when it ends. */
  async function subscribeOnce(): Promise<void> {
    const res = await doFetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', Authorization: `Bearer ${await opts.token()}` },
      body: JSON.stringify({ query: NODE_COMMANDS }),
      signal: stopping.signal,
    });
    if (!res.ok || !res.body) throw new ControlPlaneError(`command subscription: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    log.debug('command subscription open');
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue; // keep-alive comment
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (event === 'complete') return;
        if (data.length > 0 && data.join('').trim()) handle(data.join('\n'));
      }
    }
  }

  async function subscribeLoop(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        await subscribeOnce();
        if (!stopping.signal.aborted) log.warn('command subscription ended; reconnecting');
      } catch (err) {
        if (stopping.signal.aborted) return;
        log.warn({ err: (err as Error).message }, 'command subscription failed; reconnecting');
      }
      await new Promise((r) => setTimeout(r, retryMs).unref());
    }
  }

  return {
    async start() {
      await registerOnce();
      scheduleBeat();
      subscription = subscribeLoop();
    },
    async stop() {
      stopping.abort();
      clearTimeout(heartbeatTimer);
      await subscription;
    },
    async signal(list) {
      if (list.length === 0) return;
      const data = await send(NODE_SIGNAL, { envelope: signalEnvelope(opts.nodeId, list) });
      if (data.nodeSignal !== true) throw new Error('the control plane did not accept the signals');
    },
    status: () => status,
  };
}
