// The one function through which every session state change goes: it checks the state table,
// writes the row and appends to the ordered change stream in one transaction, then publishes.
import { canTransition, InternalStatus, type EndReason } from '../../schema/states.ts';
import type { Prisma, SessionRow } from '../db/client.ts';
import type { Deps } from '../deps.ts';
import type { SessionChange } from '../events/bus.ts';

export interface TransitionOptions {
  reason?: EndReason | 'ATTACHED' | 'PLACED' | 'BROWSER_READY';
  message?: string;
  patch?: Prisma.SessionUpdateInput;
}

const TERMINAL: InternalStatus[] = ['STOPPED', 'FAILED'];

type Tx = Parameters<Parameters<Deps['db']['$transaction']>[0]>[0];

export interface Applied {
  row: SessionRow;
  change: SessionChange;
}

/** The state change itself, inside a transaction the caller holds; null when not allowed. */
export async function transitionIn(tx: Tx, clock: Deps['clock'], sessionId: string, to: InternalStatus, opts: TransitionOptions = {}): Promise<Applied | null> {
  const locked = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM "Session" WHERE id = ${sessionId} FOR UPDATE`;
  const current = locked[0] && InternalStatus.parse(locked[0].status);
  if (!current || !canTransition(current, to)) return null;
  const now = new Date(clock.now());
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
  return { row, change: { seq: event.seq.toString(), sessionId, projectId: row.projectId, from: current, to, reason: event.reason } };
}

/** Moves a session to `to`; returns the updated row, or null when the move is not allowed
 *  from the session's current state (or the session is gone). */
export async function transition(
  deps: Pick<Deps, 'db' | 'bus' | 'clock'>,
  sessionId: string,
  to: InternalStatus,
  opts: TransitionOptions = {},
): Promise<SessionRow | null> {
  const result = await deps.db.$transaction((tx) => transitionIn(tx, deps.clock, sessionId, to, opts), { maxWait: 10_000, timeout: 10_000 });
  if (!result) return null;
  await deps.bus.publish(result.change);
  return result.row;
}

export const isTerminal = (s: string): boolean => s === 'STOPPED' || s === 'FAILED';
