// API keys: random, shown once, stored only as a SHA-256 hash; each reaches one or more projects.
import crypto from 'node:crypto';
import type { Db } from '../db/client.ts';
import { Invalid, NotFound, Unauthorized } from '../errors.ts';

export interface KeyAuth {
  keyId: string;
  projectIds: string[];
}

export const hashKey = (key: string): string => crypto.createHash('sha256').update(key).digest('hex');

export async function createApiKey(db: Db, projectIds: string[], key = `cvn_${crypto.randomBytes(24).toString('base64url')}`) {
  if (projectIds.length === 0) throw new Invalid('an API key needs at least one project');
  const found = await db.project.findMany({ where: { id: { in: projectIds } }, select: { id: true } });
  const missing = projectIds.filter((p) => !found.some((f) => f.id === p));
  if (missing.length) throw new NotFound(`project ${missing.join(', ')} not found`);
  const id = `key_${crypto.randomUUID()}`;
  await db.apiKey.create({
    data: { id, hash: hashKey(key), prefix: key.slice(0, 8), projects: { create: [...new Set(projectIds)].map((projectId) => ({ projectId })) } },
  });
  return { id, key, projectIds };
}

/** Makes sure `key` exists and reaches `projectId` (the bootstrap key of the config). */
export async function ensureApiKey(db: Db, key: string, projectId: string): Promise<void> {
  const hash = hashKey(key);
  const existing = await db.apiKey.findUnique({ where: { hash } });
  if (!existing) {
    try {
      await createApiKey(db, [projectId], key);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'P2002') throw err;
    }
    // A replica starting at the same moment created it first: link it like an existing key.
    return ensureApiKey(db, key, projectId);
  }
  await db.apiKeyProject
    .upsert({
      where: { apiKeyId_projectId: { apiKeyId: existing.id, projectId } },
      create: { apiKeyId: existing.id, projectId },
      update: {},
    })
    .catch((err: { code?: string }) => {
      if (err.code !== 'P2002') throw err; // linked by a replica at the same moment
    });
  if (existing.revokedAt) await db.apiKey.update({ where: { id: existing.id }, data: { revokedAt: null } });
}

export async function listApiKeys(db: Db) {
  const keys = await db.apiKey.findMany({ include: { projects: true }, orderBy: { createdAt: 'asc' } });
  return keys.map((k) => ({
    id: k.id,
    prefix: k.prefix,
    createdAt: k.createdAt.toISOString(),
    revokedAt: k.revokedAt?.toISOString() ?? null,
    projectIds: k.projects.map((p) => p.projectId),
  }));
}

export async function revokeApiKey(db: Db, id: string, cache?: KeyCache) {
  const res = await db.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  cache?.forget(id);
  if (res.count === 0) throw new NotFound(`API key ${id} not found or already revoked`);
  return { id, revoked: true };
}

/**
 * Remembers recent successful key lookups for a few seconds, so that a busy client does not
 * cost a database query per request. A revocation on this replica takes effect at once, on
 * other replicas within the TTL (docs/decisions.md).
 */
export interface KeyCache {
  get(hash: string): KeyAuth | undefined;
  set(hash: string, auth: KeyAuth): void;
  forget(keyId: string): void;
}

export function keyCache(ttlMs = 5_000, now: () => number = Date.now, max = 10_000): KeyCache {
  const entries = new Map<string, { auth: KeyAuth; at: number }>();
  return {
    get(hash) {
      const e = entries.get(hash);
      if (!e) return undefined;
      if (now() - e.at > ttlMs) {
        entries.delete(hash);
        return undefined;
      }
      return e.auth;
    },
    set(hash, auth) {
      if (entries.size >= max) entries.clear();
      entries.set(hash, { auth, at: now() });
    },
    forget(keyId) {
      for (const [hash, e] of entries) if (e.auth.keyId === keyId) entries.delete(hash);
    },
  };
}

export async function authenticate(db: Db, key: string | undefined, cache?: KeyCache): Promise<KeyAuth> {
  if (!key) throw new Unauthorized();
  const hash = hashKey(key);
  const cached = cache?.get(hash);
  if (cached) return cached;
  const row = await db.apiKey.findUnique({ where: { hash }, include: { projects: { select: { projectId: true } } } });
  if (!row || row.revokedAt) throw new Unauthorized('invalid or revoked API key');
  const auth = { keyId: row.id, projectIds: row.projects.map((p) => p.projectId) };
  cache?.set(hash, auth);
  return auth;
}

/**
 * The project a request acts on: the explicit one (body or path) or the x-svc-project-id
 * header, which must be one the key reaches; else the key's only project. A project outside
 * the key answers 404 so that existence is not leaked.
 */
export function resolveProject(auth: KeyAuth, explicit?: string, header?: string): string {
  const wanted = explicit ?? header;
  if (wanted !== undefined) {
    if (!auth.projectIds.includes(wanted)) throw new NotFound(`project ${wanted} not found`);
    return wanted;
  }
  if (auth.projectIds.length === 1) return auth.projectIds[0]!;
  throw new Invalid('this API key reaches several projects: name one with projectId or the x-svc-project-id header');
}
