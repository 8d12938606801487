// Nodes as the dashboard shows them: the node use case's view (capacity, running sessions) with
// the rest of the Node row (ports, TLS, last seen) and a health flag.
import type { NodeRow } from '../../db/client.ts';
import type { Deps } from '../../deps.ts';
import { listNodes, type NodeView } from '../../nodes/drain.ts';

export interface NodeItem extends NodeView {
  row: NodeRow;
  healthy: boolean;
}

/** A standalone agent silent for this long counts as unhealthy before the reaper marks it DOWN. */
export const STALE_HEARTBEAT_MS = 15_000;

export async function readNodes(deps: Pick<Deps, 'db' | 'clock'>, only?: string): Promise<NodeItem[]> {
  const [views, rows] = await Promise.all([
    listNodes(deps, only),
    deps.db.node.findMany({ where: only ? { id: only } : {} }),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const now = deps.clock.now();
  return views.flatMap((v) => {
    const row = byId.get(v.id);
    if (!row) return [];
    const fresh = !row.heartbeatAt || now - row.heartbeatAt.getTime() < STALE_HEARTBEAT_MS;
    return [{ ...v, row, healthy: v.status === 'UP' && fresh }];
  });
}
