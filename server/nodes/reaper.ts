// The node reaper: a standalone agent that missed its heartbeats for NODE_HEARTBEAT_TIMEOUT_MS
// is marked DOWN and its live sessions end in ERROR (NODE_DOWN). Nodes that never heartbeat
// (the in-process local node) are not its business.
import { LIVE_STATUSES } from '../../schema/states.ts';
import type { Deps } from '../deps.ts';
import { releaseContextLock } from '../contexts/attach.ts';
import { endSession } from '../sessions/end.ts';

export async function reapNodesOnce(deps: Deps, timeoutMs: number): Promise<{ down: string[]; failed: number }> {
  const cutoff = new Date(deps.clock.now() - timeoutMs);
  const stale = await deps.db.node.findMany({ where: { heartbeatAt: { lt: cutoff }, status: { in: ['UP', 'DRAINING'] } }, select: { id: true } });
  const down: string[] = [];
  let failed = 0;
  for (const n of stale) {
    // Conditional, so that of several replicas one marks it, and a heartbeat that just arrived wins.
    const { count } = await deps.db.node.updateMany({ where: { id: n.id, heartbeatAt: { lt: cutoff }, status: { in: ['UP', 'DRAINING'] } }, data: { status: 'DOWN' } });
    if (count === 0) continue;
    down.push(n.id);
    deps.log.warn({ nodeId: n.id, timeoutMs }, 'node missed its heartbeats: marked DOWN');
    const live = await deps.db.session.findMany({ where: { nodeId: n.id, status: { in: LIVE_STATUSES } }, select: { id: true } });
    for (const s of live) {
      await releaseContextLock(deps, s.id).catch(() => undefined);
      if (await endSession(deps, s.id, 'FAILED', 'NODE_DOWN', `node ${n.id} missed its heartbeats for ${timeoutMs / 1000} s and was marked DOWN; the browser is lost`)) failed++;
    }
  }
  return { down, failed };
}

export function startNodeReaper(getDeps: () => Deps | undefined, timeoutMs: number, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    const deps = getDeps();
    if (running || !deps) return;
    running = true;
    reapNodesOnce(deps, timeoutMs)
      .catch((err) => deps.log.error({ err }, 'node reaper failed'))
      .finally(() => { running = false; });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
