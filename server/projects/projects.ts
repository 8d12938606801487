// Projects: create (operator), list and retrieve (API keys), and usage.
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../db/client.ts';
import { Invalid, NotFound } from '../errors.ts';

export const NewProject = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'id may hold letters, digits, _ and - (at most 64)').optional(),
  name: z.string().trim().min(1, 'name must not be empty').max(200),
  concurrency: z.number().int().min(1).max(10_000).default(25),
  defaultTimeout: z.number().int().min(60).max(86_400).default(3600),
});

export interface ProjectView {
  id: string;
  name: string;
  defaultTimeout: number;
  concurrency: number;
  createdAt: string;
  updatedAt: string;
}

const view = (p: { id: string; name: string; defaultTimeout: number; concurrency: number; createdAt: Date; updatedAt: Date }): ProjectView => ({
  id: p.id,
  name: p.name,
  defaultTimeout: p.defaultTimeout,
  concurrency: p.concurrency,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

export async function createProject(db: Db, input: unknown): Promise<ProjectView> {
  const parsed = NewProject.safeParse(input);
  if (!parsed.success) throw new Invalid(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const { id = `proj_${crypto.randomUUID()}`, ...rest } = parsed.data;
  return view(await db.project.create({ data: { id, ...rest } }));
}

export async function ensureProject(db: Db, id: string): Promise<void> {
  try {
    await db.project.upsert({ where: { id }, create: { id, name: id, defaultTimeout: 3600, concurrency: 25 }, update: {} });
  } catch (err) {
    // upsert is read-then-insert: a replica starting at the same moment may insert first.
    if ((err as { code?: string }).code !== 'P2002') throw err;
  }
}

export async function listProjects(db: Db, ids?: string[]): Promise<ProjectView[]> {
  const rows = await db.project.findMany({ where: ids ? { id: { in: ids } } : {}, orderBy: { createdAt: 'asc' } });
  return rows.map(view);
}

export async function getProject(db: Db, id: string): Promise<ProjectView> {
  const row = await db.project.findUnique({ where: { id } });
  if (!row) throw new NotFound(`project ${id} not found`);
  return view(row);
}

export interface Usage {
  browserMinutes: number;
  proxyBytes: number;
}

/** Minutes of browser time (running sessions count up to now) and proxied bytes. */
export async function projectUsage(db: Db, id: string, now: number): Promise<Usage> {
  const [row] = await db.$queryRaw<{ ms: number | null; bytes: bigint | null }[]>`
    SELECT SUM(EXTRACT(EPOCH FROM (COALESCE("endedAt", (to_timestamp(${now / 1000}) AT TIME ZONE 'UTC')) - "startedAt")) * 1000)::float8 AS ms,
           SUM("proxyBytes")::bigint AS bytes
    FROM "Usage" WHERE "projectId" = ${id}`;
  const ms = Math.max(0, row?.ms ?? 0);
  return { browserMinutes: Math.round((ms / 60_000) * 1000) / 1000, proxyBytes: Number(row?.bytes ?? 0) };
}
