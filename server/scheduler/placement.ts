// Placement: which node gets a new session. Pure logic over a snapshot of the nodes, so that it
// is tested in memory: only UP nodes with a free slot qualify; the least loaded one wins (by
// share of capacity in use, then by running count), ties go to the smallest id.
import type { NodeStatus } from '../../schema/node.ts';

export interface NodeSnapshot {
  id: string;
  status: NodeStatus;
  capacity: number;
  /** Live sessions placed on the node (including ones still starting). */
  running: number;
}

export type PlacementResult =
  | { ok: true; nodeId: string }
  | { ok: false; reason: string };

export function place(nodes: readonly NodeSnapshot[]): PlacementResult {
  if (nodes.length === 0) return { ok: false, reason: 'no browser node is registered: start `caravan agent` on a client VM' };
  const up = nodes.filter((n) => n.status === 'UP');
  if (up.length === 0) {
    const draining = nodes.filter((n) => n.status === 'DRAINING').length;
    const down = nodes.filter((n) => n.status === 'DOWN').length;
    return { ok: false, reason: `no browser node takes new sessions (${describe(draining, 'draining')}, ${describe(down, 'down')})` };
  }
  const open = up.filter((n) => n.running < n.capacity);
  if (open.length === 0) {
    const used = up.reduce((s, n) => s + n.running, 0);
    const total = up.reduce((s, n) => s + n.capacity, 0);
    return { ok: false, reason: `every browser node is at capacity (${used} of ${total} browsers on ${describe(up.length, 'node')}); retry when a session ends` };
  }
  const best = open.reduce((a, b) => (compare(a, b) <= 0 ? a : b));
  return { ok: true, nodeId: best.id };
}

/** Orders nodes by load: smaller share of capacity first, then fewer sessions, then id. */
function compare(a: NodeSnapshot, b: NodeSnapshot): number {
  // Cross-multiplied, so that no float rounding decides between equal shares.
  const share = a.running * b.capacity - b.running * a.capacity;
  if (share !== 0) return share;
  if (a.running !== b.running) return a.running - b.running;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function describe(n: number, what: string): string {
  return `${n} ${what}${n === 1 || what === 'draining' || what === 'down' ? '' : 's'}`;
}
