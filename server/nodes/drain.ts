// Draining a node: it takes no new sessions (placement skips it) and its running sessions
// finish on their own; its agent hears it as a `drain` command.
import { NodeStatus } from '../../schema/node.ts';
import { LIVE_STATUSES } from '../../schema/states.ts';
import type { Deps } from '../deps.ts';
import { NotFound } from '../errors.ts';

export interface NodeView {
  id: string;
  status: NodeStatus;
  publicHost: string;
  capacity: number;
  running: number;
  lastHeartbeatAt: string | null;
  nomadNodeId: string | null;
}

export async function drainNode(deps: Pick<Deps, 'db' | 'log'>, id: string): Promise<NodeView> {
  const { count } = await deps.db.node.updateMany({ where: { id }, data: { status: 'DRAINING' } });
  if (count === 0) throw new NotFound(`node ${id} not found`);
  deps.log.info({ nodeId: id }, 'node draining');
  const [view] = await listNodes(deps, id);
  return view!;
}

export async function listNodes(deps: Pick<Deps, 'db'>, only?: string): Promise<NodeView[]> {
  const nodes = await deps.db.node.findMany({ where: only ? { id: only } : {}, orderBy: { id: 'asc' } });
  const counts = await deps.db.session.groupBy({
    by: ['nodeId'],
    where: { nodeId: { in: nodes.map((n) => n.id) }, status: { in: LIVE_STATUSES } },
    _count: { _all: true },
  });
  const running = new Map(counts.map((c) => [c.nodeId, c._count._all]));
  return nodes.map((n) => ({
    id: n.id,
    status: NodeStatus.catch('DOWN').parse(n.status),
    publicHost: n.publicHost,
    capacity: n.capacity,
    running: running.get(n.id) ?? 0,
    lastHeartbeatAt: n.heartbeatAt?.toISOString() ?? null,
    nomadNodeId: n.nomadNodeId,
  }));
}
