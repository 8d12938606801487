// Session reads for operators (every project): a filtered list with cursor paging, newest
// first, and one session's ordered change events. API-key callers use server/sessions/read.ts.
import { z } from 'zod';
import type { SessionActivity } from '../../../schema/runtime.ts';
import { InternalStatus, internalFor, SdkStatus } from '../../../schema/states.ts';
import type { Db, Prisma, SessionRow } from '../../db/client.ts';
import type { SessionEventRow } from '../../db/client.ts';
import type { SessionChange } from '../../events/bus.ts';
import { Invalid } from '../../errors.ts';
import { parseInput } from '../../validate.ts';

export const SessionFilter = z.strictObject({
  projectId: z.string().min(1).max(64).optional(),
  status: SdkStatus.optional(),
  nodeId: z.string().min(1).max(64).optional(),
  /** A string: userMetadata containing it anywhere; an object: userMetadata with exactly those fields. */
  metadata: z.union([z.string().min(1).max(500), z.record(z.string(), z.unknown())]).optional(),
});
export type SessionFilter = z.infer<typeof SessionFilter>;

export const MAX_PAGE = 200;
/** A metadata search narrows to at most this many sessions before paging. */
const METADATA_SCAN_LIMIT = 10_000;

export interface SessionPage {
  nodes: SessionRow[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
  totalCount: number;
}

const encodeCursor = (s: SessionRow): string => Buffer.from(`${s.createdAt.toISOString()}|${s.id}`).toString('base64url');

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw new Invalid('after: not a cursor from this API (use pageInfo.endCursor)');
  return { createdAt, id };
}

async function metadataIds(db: Db, metadata: string | Record<string, unknown>): Promise<string[]> {
  const rows = typeof metadata === 'string'
    ? await db.$queryRaw<{ id: string }[]>`
        SELECT id FROM "Session" WHERE "userMetadata"::text ILIKE ${'%' + metadata.replace(/[\\%_]/g, (c) => `\\${c}`) + '%'}
        ORDER BY "createdAt" DESC LIMIT ${METADATA_SCAN_LIMIT}`
    : await db.$queryRaw<{ id: string }[]>`
        SELECT id FROM "Session" WHERE "userMetadata" @> ${JSON.stringify(metadata)}::jsonb
        ORDER BY "createdAt" DESC LIMIT ${METADATA_SCAN_LIMIT}`;
  return rows.map((r) => r.id);
}

export async function listOperatorSessions(db: Db, filterInput: unknown, first: number, after?: string | null): Promise<SessionPage> {
  const filter = parseInput(SessionFilter, filterInput ?? {});
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) throw new Invalid(`first must be 1..${MAX_PAGE}`);
  const where: Prisma.SessionWhereInput = {};
  if (filter.projectId) where.projectId = filter.projectId;
  if (filter.nodeId) where.nodeId = filter.nodeId;
  if (filter.status) {
    where.status = { in: internalFor(filter.status) };
    if (filter.status === 'TIMED_OUT') where.endReason = 'TIMED_OUT';
    if (filter.status === 'COMPLETED') where.NOT = { endReason: 'TIMED_OUT' };
  }
  if (filter.metadata !== undefined) where.id = { in: await metadataIds(db, filter.metadata) };
  const paged: Prisma.SessionWhereInput = { ...where };
  if (after) {
    const c = decodeCursor(after);
    paged.OR = [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }];
  }
  const [rows, totalCount] = await Promise.all([
    db.session.findMany({ where: paged, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: first + 1 }),
    db.session.count({ where }),
  ]);
  const nodes = rows.slice(0, first);
  const last = nodes[nodes.length - 1];
  return { nodes, pageInfo: { endCursor: last ? encodeCursor(last) : null, hasNextPage: rows.length > first }, totalCount };
}

export type SessionEventItem = Omit<SessionActivity, 'type'>;

export function eventFromRow(r: SessionEventRow): SessionEventItem {
  return {
    seq: r.seq.toString(), sessionId: r.sessionId, projectId: r.projectId,
    from: r.from ? InternalStatus.parse(r.from) : null, to: InternalStatus.parse(r.to), reason: r.reason, at: r.createdAt.toISOString(),
  };
}

export function eventFromChange(c: SessionChange, now: number): SessionEventItem {
  return { seq: c.seq, sessionId: c.sessionId, projectId: c.projectId, from: c.from, to: c.to, reason: c.reason, at: new Date(now).toISOString() };
}

/** A session's change events in stream order. */
export async function sessionEvents(db: Db, sessionId: string): Promise<SessionEventItem[]> {
  const rows = await db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: 'asc' }, take: 1000 });
  return rows.map(eventFromRow);
}
