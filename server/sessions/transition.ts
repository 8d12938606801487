// The one function through which every session state change goes: it checks the state table,
// writes the row and appends to the ordered change stream in one transaction, then publishes.
import { canTransition, InternalStatus, type EndReason } from '../../schema/states.ts';
import type { Prisma, SessionRow } from '../db/client.ts';
import type { Deps } from '../deps.ts';

export interface TransitionOptions {
  reason?: EndReason | 'ATTACHED' | 'PLACED' | 'BROWSER_READY';
  message?: string;
  patch?: Prisma.SessionUpdateInput;
}

const TERMINAL: InternalStatus[] = ['STOPPED', 'FAILED'];

/** Moves a session to `to`; returns the updated row, or null when the move is not allowed
 *  from the session's current state (or the session is gone). */
export async function transition(
  deps: Pick<Deps, 'db' | 'bus' | 'clock'>,
  sessionId: string,
  to: InternalStatus,
  opts: TransitionOptions = {},
): Promise<SessionRow | null> {
  const result = await deps.db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM "Session" WHERE id = ${sessionId} FOR UPDATE`;
    const current = locked[0] && InternalStatus.parse(locked[0].status);
    if (!current || !canTransition(current, to)) return null;
    const now = new Date(deps.clock.now());
    const terminal = TERMINAL.includes(to);
    const row = await tx.session.update({
      where: { id: sessionId },
      data: {
        ...opts.patch,
        status: to,
        updatedAt: now,
        ...(terminal ? { endedAt: now, endReason: opts.reason ?? null, errorMessage: opts.message ?? null } : {}),
      },
    });
    const event = await tx.sessionEvent.create({
      data: { sessionId, projectId: row.projectId, from: current, to, reason: opts.reason ?? null, createdAt: now },
    });
    if (terminal) await tx.usage.updateMany({ where: { sessionId, endedAt: null }, data: { endedAt: now } });
    return { row, event };
  }, { maxWait: 10_000, timeout: 10_000 });
  if (!result) return null;
  const { row, event } = result;
  await deps.bus.publish({
    seq: event.seq.toString(),
    sessionId,
    projectId: row.projectId,
    from: InternalStatus.parse(event.from),
    to,
    reason: event.reason,
  });
  return row;
}

export const isTerminal = (s: string): boolean => s === 'STOPPED' || s === 'FAILED';
