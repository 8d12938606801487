// Wire contracts between a standalone node agent (`caravan agent`) and the control plane:
// registration, heartbeat, the commands it receives and the signals it sends (both carried in
// the message envelope of schema/envelope.ts), and the GraphQL operations that carry them.
import { z } from 'zod';
import { NodeSignal } from './agent.ts';
import { CONTROL_PLANE_ID, Envelope } from './envelope.ts';

export const NodeId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a node id is 1-64 of A-Z a-z 0-9 _ . -');
const Port = z.number().int().min(1).max(65535);

export const NodeStatus = z.enum(['UP', 'DRAINING', 'DOWN']);
export type NodeStatus = z.infer<typeof NodeStatus>;

/** Agent -> control plane (`registerNode`), at start and whenever the control plane forgot it. */
export const NodeRegistration = z.strictObject({
  nodeId: NodeId,
  publicHost: z.string().min(1).max(255),
  cdpPort: Port,
  webdriverPort: Port.optional(),
  tls: z.boolean(),
  /** Browsers this node runs at once. */
  capacity: z.number().int().min(1).max(10_000),
  /** The agent's loopback control port on its VM (launchers register their routes there). */
  controlPort: Port,
  /** The Nomad client node the agent runs on (`${node.unique.id}`), when it runs under Nomad. */
  nomadNodeId: z.string().min(1).max(64).optional(),
});
export type NodeRegistration = z.infer<typeof NodeRegistration>;

/** Agent -> control plane (`heartbeat`), every AGENT_HEARTBEAT_MS. */
export const Heartbeat = z.strictObject({
  nodeId: NodeId,
  /** Sessions whose browser is routed through this agent right now. */
  routes: z.number().int().nonnegative(),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/** Control plane -> agent: the answer to registerNode and heartbeat. */
export const NodeState = z.object({ status: NodeStatus });
export type NodeState = z.infer<typeof NodeState>;

/** Control plane -> agent: `payload.structured` of a `handoff` envelope on `nodeCommands`. */
export const NodeCommand = z.discriminatedUnion('command', [
  /** The session ended: drop its route (its clients are cut off now) and make sure its
   *  browser goes, even if the scheduler cannot reach the launcher. */
  z.strictObject({ command: z.literal('release'), sessionId: z.string().min(1) }),
  /** The node takes no new sessions; running ones finish. */
  z.strictObject({ command: z.literal('drain') }),
]);
export type NodeCommand = z.infer<typeof NodeCommand>;

/** Agent -> control plane: `payload.structured` of a `signal` envelope (`nodeSignal`). */
export const NodeSignalBatch = z.strictObject({ signals: z.array(NodeSignal).min(1).max(1000) });
export type NodeSignalBatch = z.infer<typeof NodeSignalBatch>;

export function commandEnvelope(nodeId: string, command: NodeCommand, message: string): Envelope {
  return Envelope.parse({ kind: 'handoff', fromNodeId: CONTROL_PLANE_ID, toNodeId: nodeId, payload: { message, structured: command } });
}

export function signalEnvelope(nodeId: string, signals: NodeSignal[]): Envelope {
  return Envelope.parse({ kind: 'signal', fromNodeId: nodeId, toNodeId: CONTROL_PLANE_ID, payload: { structured: { signals } } });
}

export const REGISTER_NODE = 'mutation RegisterNode($input: JSON!) { registerNode(input: $input) }';
export const HEARTBEAT = 'mutation Heartbeat($input: JSON!) { heartbeat(input: $input) }';
export const NODE_SIGNAL = 'mutation NodeSignal($envelope: JSON!) { nodeSignal(envelope: $envelope) }';
export const NODE_COMMANDS = 'subscription NodeCommands { nodeCommands }';
