// Reads of sessions for API-key callers: list with the spec's `q` and `status` filters,
// retrieve, and the debug URLs.
import { ListSessionsQuery } from '../../schema/rest.ts';
import { internalFor } from '../../schema/states.ts';
import type { KeyAuth } from '../auth/apiKeys.ts';
import type { Db, Prisma, SessionRow } from '../db/client.ts';
import { Invalid, NotFound } from '../errors.ts';
import { parseInput } from '../validate.ts';
import { sessionView, type SessionView } from './view.ts';

const LIST_LIMIT = 1000;

async function bytesFor(db: Db, ids: string[]): Promise<Map<string, number>> {
  const rows = await db.usage.findMany({ where: { sessionId: { in: ids } }, select: { sessionId: true, proxyBytes: true } });
  return new Map(rows.map((r) => [r.sessionId, Number(r.proxyBytes)]));
}

export async function listSessions(db: Db, auth: KeyAuth, query: unknown, headerProject?: string): Promise<SessionView[]> {
  const q = parseInput(ListSessionsQuery, query, 'query');
  const projectIds = headerProject ? [headerProject].filter((p) => auth.projectIds.includes(p)) : auth.projectIds;
  if (headerProject && projectIds.length === 0) throw new NotFound(`project ${headerProject} not found`);
  const where: Prisma.SessionWhereInput = { projectId: { in: projectIds } };
  if (q.status) {
    where.status = { in: internalFor(q.status) };
    if (q.status === 'TIMED_OUT') where.endReason = 'TIMED_OUT';
    if (q.status === 'COMPLETED') where.NOT = { endReason: 'TIMED_OUT' };
  }
  let rows: SessionRow[];
  const metadata = q.q === undefined ? undefined : parseQ(q.q);
  if (metadata === undefined) {
    rows = await db.session.findMany({ where, orderBy: { createdAt: 'desc' }, take: LIST_LIMIT });
  } else if (typeof metadata === 'string') {
    // A plain string matches userMetadata that contains it, in any key or value.
    const ids = await db.$queryRaw<{ id: string }[]>`
      SELECT id FROM "Session" WHERE "projectId" = ANY(${projectIds}) AND "userMetadata"::text ILIKE ${'%' + escapeLike(metadata) + '%'}`;
    rows = await db.session.findMany({ where: { ...where, id: { in: ids.map((r) => r.id) } }, orderBy: { createdAt: 'desc' }, take: LIST_LIMIT });
  } else {
    // A JSON object matches sessions whose userMetadata has exactly those fields and values.
    const ids = await db.$queryRaw<{ id: string }[]>`
      SELECT id FROM "Session" WHERE "projectId" = ANY(${projectIds}) AND "userMetadata" @> ${JSON.stringify(metadata)}::jsonb`;
    rows = await db.session.findMany({ where: { ...where, id: { in: ids.map((r) => r.id) } }, orderBy: { createdAt: 'desc' }, take: LIST_LIMIT });
  }
  const bytes = await bytesFor(db, rows.map((r) => r.id));
  return rows.map((r) => sessionView(r, bytes.get(r.id) ?? 0, { secrets: false }));
}

function parseQ(q: string): string | Record<string, unknown> {
  const t = q.trim();
  if (t.startsWith('{')) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      throw new Invalid('q: looks like JSON but does not parse; send a JSON object or a plain string');
    }
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  }
  return q;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A session of one of the key's projects; any other answers 404. */
export async function findSession(db: Db, auth: KeyAuth, id: string): Promise<SessionRow> {
  const row = await db.session.findUnique({ where: { id } });
  if (!row || !auth.projectIds.includes(row.projectId)) throw new NotFound(`session ${id} not found`);
  return row;
}

export async function getSession(db: Db, auth: KeyAuth, id: string): Promise<SessionView> {
  const row = await findSession(db, auth, id);
  const bytes = await bytesFor(db, [id]);
  return sessionView(row, bytes.get(id) ?? 0, { secrets: true });
}
