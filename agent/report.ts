// A tiny GraphQL-over-fetch client for the reports launchers and node agents send to the control plane.
import { z } from 'zod';
import { NodeSignal, SessionReport } from '../schema/agent.ts';
import { REPORT_CONTEXT_SAVED, REPORT_NODE_SIGNALS, REPORT_SESSION } from '../schema/graphql-ops.ts';

export interface ControlPlaneClient {
  reportSession(input: SessionReport): Promise<void>;
  reportNodeSignals(signals: NodeSignal[]): Promise<void>;
  /** After a persisting session's profile upload; resolves with whether the control plane kept it. */
  reportContextSaved(sessionId: string): Promise<boolean>;
}

export interface ControlPlaneClientOptions {
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const GraphQLAnswer = z.object({
  data: z.unknown().optional(),
  errors: z.array(z.object({ message: z.string() }).loose()).optional(),
});

/** `url` is the control plane's base URL; operations go to `${url}/graphql` with the bearer token. */
export function controlPlaneClient(url: string, token: string, options: ControlPlaneClientOptions = {}): ControlPlaneClient {
  const endpoint = `${url.replace(/\/+$/, '')}/graphql`;
  const doFetch = options.fetch ?? fetch;

  async function send(query: string, variables: Record<string, unknown>, timeoutMs = options.timeoutMs ?? 10_000): Promise<unknown> {
    const res = await doFetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: z.infer<typeof GraphQLAnswer> | undefined;
    try {
      body = GraphQLAnswer.parse(JSON.parse(text));
    } catch {
      body = undefined;
    }
    if (body?.errors?.length) throw new Error(`control plane: ${body.errors.map((e) => e.message).join('; ')}`);
    if (!res.ok) throw new Error(`control plane answered HTTP ${res.status}: ${text.slice(0, 200)}`);
    if (!body) throw new Error('control plane answered with something that is not GraphQL JSON');
    return body.data;
  }

  return {
    async reportSession(input) {
      await send(REPORT_SESSION, { input: SessionReport.parse(input) });
    },
    async reportNodeSignals(signals) {
      if (signals.length === 0) return;
      await send(REPORT_NODE_SIGNALS, { signals: z.array(NodeSignal).parse(signals) });
    },
    async reportContextSaved(sessionId) {
      const data = z.object({ reportContextSaved: z.boolean() }).parse(await send(REPORT_CONTEXT_SAVED, { sessionId }));
      return data.reportContextSaved;
    },
  };
}
