// The reaper: ends sessions whose timeout passed (TIMED_OUT) and removes ended records once
// their stored expiresAt (and the retention after the end) has passed. Usage rows stay.
import { LIVE_STATUSES } from '../../schema/states.ts';
import type { Deps } from '../deps.ts';
import { endSession } from './end.ts';

export async function reapOnce(deps: Deps): Promise<{ timedOut: number; removed: number }> {
  const nowMs = deps.clock.now();
  const now = BigInt(Math.floor(nowMs / 1000));
  const overdue = await deps.db.session.findMany({
    where: { status: { in: LIVE_STATUSES }, expiresAt: { lte: now } },
    select: { id: true },
    take: 500,
  });
  let timedOut = 0;
  for (const s of overdue) {
    if (await endSession(deps, s.id, 'STOPPED', 'TIMED_OUT', 'the session timeout passed')) timedOut++;
  }
  const keepEndedUntil = new Date(nowMs - deps.config.SESSION_RECORD_RETENTION * 1000);
  const removed = await deps.db.session.deleteMany({
    where: { status: { in: ['STOPPED', 'FAILED'] }, expiresAt: { lte: now }, endedAt: { lte: keepEndedUntil } },
  });
  return { timedOut, removed: removed.count };
}

export function startReaper(deps: Deps, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    reapOnce(deps)
      .then((r) => { if (r.timedOut || r.removed) deps.log.info(r, 'reaper'); })
      .catch((err) => deps.log.error({ err }, 'reaper failed'))
      .finally(() => { running = false; });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
