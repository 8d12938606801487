// A standalone node agent announces itself (registerNode) and keeps announcing (heartbeat).
// Registration makes the node UP, except that a drain outlives agent restarts; a heartbeat
// from a node marked DOWN brings it back UP (its old sessions have ended meanwhile).
import { Heartbeat, NodeRegistration, NodeStatus, type NodeState } from '../../schema/node.ts';
import type { Deps } from '../deps.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseInput } from '../validate.ts';

export async function registerNode(deps: Pick<Deps, 'db' | 'clock' | 'log'>, callerNodeId: string, input: unknown): Promise<NodeState> {
  const reg = parseInput(NodeRegistration, input);
  if (reg.nodeId !== callerNodeId) throw new Forbidden(`this credential is for node ${callerNodeId}, not ${reg.nodeId}`);
  const now = new Date(deps.clock.now());
  const fields = {
    publicHost: reg.publicHost, cdpPort: reg.cdpPort, webdriverPort: reg.webdriverPort ?? null, tls: reg.tls,
    capacity: reg.capacity, controlPort: reg.controlPort, nomadNodeId: reg.nomadNodeId ?? null, heartbeatAt: now, lastSeenAt: now,
  };
  const row = await deps.db.$transaction(async (tx) => {
    // Locked, so that a drain committed meanwhile is not overwritten with UP.
    const [existing] = await tx.$queryRaw<Array<{ status: string }>>`SELECT status FROM "Node" WHERE id = ${reg.nodeId} FOR UPDATE`;
    const status = existing?.status === 'DRAINING' ? 'DRAINING' : 'UP';
    return tx.node.upsert({
      where: { id: reg.nodeId },
      create: { id: reg.nodeId, name: reg.nodeId, status, ...fields },
      update: { status, ...fields },
    });
  });
  deps.log.info({ nodeId: reg.nodeId, status: row.status, publicHost: reg.publicHost, capacity: reg.capacity, nomadNodeId: reg.nomadNodeId }, 'node registered');
  return { status: NodeStatus.parse(row.status) };
}

export async function heartbeatNode(deps: Pick<Deps, 'db' | 'clock' | 'log'>, callerNodeId: string, input: unknown): Promise<NodeState> {
  const beat = parseInput(Heartbeat, input);
  if (beat.nodeId !== callerNodeId) throw new Forbidden(`this credential is for node ${callerNodeId}, not ${beat.nodeId}`);
  const now = new Date(deps.clock.now());
  const row = await deps.db.$transaction(async (tx) => {
    // Locked: a heartbeat racing a drain must not write the status it read before the drain.
    const [old] = await tx.$queryRaw<Array<{ status: string; heartbeatAt: Date | null }>>`SELECT status, "heartbeatAt" FROM "Node" WHERE id = ${beat.nodeId} FOR UPDATE`;
    if (!old?.heartbeatAt) return null;
    const status = old.status === 'DOWN' ? 'UP' : old.status;
    await tx.node.update({ where: { id: beat.nodeId }, data: { heartbeatAt: now, lastSeenAt: now, status } });
    return { status, was: old.status };
  });
  // Unknown (or never registered as a standalone agent): the agent registers again.
  if (!row) throw new NotFound(`node ${beat.nodeId} is not registered: call registerNode first`);
  if (row.was === 'DOWN') deps.log.info({ nodeId: beat.nodeId }, 'node is back UP');
  return { status: NodeStatus.parse(row.status) };
}
