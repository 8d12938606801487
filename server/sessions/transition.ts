// The one function through which every session state change goes: it checks the state table,
// writes the row and appends to the ordered change stream in one statement, then publishes.
import { canTransition, InternalStatus, type EndReason } from '../../schema/states.ts';
import { Prisma } from '../db/client.ts';
import type { Deps } from '../deps.ts';
import type { SessionChange } from '../events/bus.ts';

/** What READY records beside the state: where the browser is and how to reach it. */
export interface PlacementPatch {
  nodeId: string;
  publicIp: string;
  connectUrl: string;
  seleniumRemoteUrl: string | null;
  debug: Prisma.InputJsonObject;
}

export interface TransitionOptions {
  reason?: EndReason | 'ATTACHED' | 'PLACED' | 'BROWSER_READY';
  message?: string;
  placement?: PlacementPatch;
}

/** The columns of the moved row that callers use. */
export interface MovedRow {
  id: string;
  projectId: string;
  status: InternalStatus;
  taskRef: string | null;
}

export interface Applied {
  row: MovedRow;
  change: SessionChange;
}

const TERMINAL: InternalStatus[] = ['STOPPED', 'FAILED'];

/** The states from which `to` may be reached, from the state table. */
const allowedFrom = (to: InternalStatus): InternalStatus[] => InternalStatus.options.filter((from) => canTransition(from, to));

type Queryable = Pick<Deps['db'], '$queryRaw'>;

/**
 * The state change as one statement (safe inside or outside a transaction): the row is locked,
 * its current state checked against the table, updated, and the change appended; null when the
 * move is not allowed from the session's current state (or the session is gone). One round trip
 * instead of five: on a busy 2-core node each round trip to PostgreSQL costs milliseconds.
 */
export async function transitionIn(db: Queryable, clock: Deps['clock'], sessionId: string, to: InternalStatus, opts: TransitionOptions = {}): Promise<Applied | null> {
  const now = new Date(clock.now());
  const terminal = TERMINAL.includes(to);
  const reason = opts.reason ?? null;
  const p = opts.placement;
  const rows = await db.$queryRaw<Array<MovedRow & { from: string; seq: bigint }>>`
    WITH cur AS (
      SELECT id, status FROM "Session" WHERE id = ${sessionId} FOR UPDATE
    ), upd AS (
      UPDATE "Session" s SET
        status = ${to},
        "updatedAt" = ${now},
        "endedAt" = CASE WHEN ${terminal} THEN ${now}::timestamp(3) ELSE s."endedAt" END,
        "endReason" = CASE WHEN ${terminal} THEN ${reason}::text ELSE s."endReason" END,
        "errorMessage" = CASE WHEN ${terminal} THEN ${opts.message ?? null}::text ELSE s."errorMessage" END,
        "nodeId" = COALESCE(${p?.nodeId ?? null}::text, s."nodeId"),
        "publicIp" = COALESCE(${p?.publicIp ?? null}::text, s."publicIp"),
        "connectUrl" = COALESCE(${p?.connectUrl ?? null}::text, s."connectUrl"),
        "seleniumRemoteUrl" = CASE WHEN ${Boolean(p)} THEN ${p?.seleniumRemoteUrl ?? null}::text ELSE s."seleniumRemoteUrl" END,
        "debug" = COALESCE(${p ? JSON.stringify(p.debug) : null}::jsonb, s."debug")
      FROM cur
      WHERE s.id = cur.id AND cur.status IN (${Prisma.join(allowedFrom(to))})
      RETURNING s.id, s."projectId", s.status, s."taskRef", cur.status AS "from"
    ), ev AS (
      INSERT INTO "SessionEvent" ("sessionId", "projectId", "from", "to", reason, "createdAt")
      SELECT id, "projectId", "from", ${to}, ${reason}::text, ${now} FROM upd
      RETURNING seq
    ), usage AS (
      UPDATE "Usage" SET "endedAt" = ${now}
      WHERE ${terminal} AND "sessionId" = ${sessionId} AND "endedAt" IS NULL AND EXISTS (SELECT 1 FROM upd)
    )
    SELECT upd.id, upd."projectId", upd.status, upd."taskRef", upd."from", ev.seq FROM upd CROSS JOIN ev`;
  const moved = rows[0];
  if (!moved) return null;
  const from = InternalStatus.parse(moved.from);
  return {
    row: { id: moved.id, projectId: moved.projectId, status: InternalStatus.parse(moved.status), taskRef: moved.taskRef },
    change: { seq: moved.seq.toString(), sessionId, projectId: moved.projectId, from, to, reason },
  };
}

/** Moves a session to `to`; returns the moved row, or null when the move is not allowed from
 *  the session's current state (or the session is gone). */
export async function transition(
  deps: Pick<Deps, 'db' | 'bus' | 'clock'>,
  sessionId: string,
  to: InternalStatus,
  opts: TransitionOptions = {},
): Promise<MovedRow | null> {
  const result = await transitionIn(deps.db, deps.clock, sessionId, to, opts);
  if (!result) return null;
  await deps.bus.publish(result.change);
  return result.row;
}

export const isTerminal = (s: string): boolean => s === 'STOPPED' || s === 'FAILED';
