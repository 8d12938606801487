// Contexts: persistent browser profiles (tar.gz) in object storage at
// <projectId>/<contextId>/profile.tar.gz. Uploads and saves land beside it first and are
// promoted only once they check out, so the stored archive is never lost to a bad upload.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { z } from 'zod';
import type { KeyAuth } from '../auth/apiKeys.ts';
import { resolveProject } from '../auth/apiKeys.ts';
import type { Db } from '../db/client.ts';
import { NotFound } from '../errors.ts';
import type { ObjectStore } from '../storage/objectStore.ts';
import { parseInput } from '../validate.ts';
import { validateArchive } from './archive.ts';

/** The spec: the archive must be uploaded within 15 minutes. */
export const UPLOAD_WINDOW_SECONDS = 15 * 60;

export interface ContextDeps {
  db: Db;
  store: ObjectStore;
  maxArchiveBytes: number;
  /** Validity of upload URLs; the spec's 15 minutes unless configured. */
  uploadWindowSeconds?: number;
}

export const archiveKey = (projectId: string, contextId: string) => `${projectId}/${contextId}/profile.tar.gz`;
export const uploadKey = (projectId: string, contextId: string) => `${projectId}/${contextId}/upload.tar.gz`;
export const saveKey = (projectId: string, contextId: string, sessionId: string) => `${projectId}/${contextId}/saves/${sessionId}.tar.gz`;

const CreateContextBody = z.object({ projectId: z.string().min(1).optional() }).strict();

const uploadFields = (id: string, uploadUrl: string) => ({ id, cipherAlgorithm: 'NONE', initializationVectorSize: 0, publicKey: '', uploadUrl });

export async function createContext(deps: ContextDeps, auth: KeyAuth, input: unknown, headerProject?: string) {
  const body = parseInput(CreateContextBody, input);
  const projectId = resolveProject(auth, body.projectId, headerProject);
  const id = `ctx_${crypto.randomUUID().replace(/-/g, '')}`;
  await deps.db.context.create({ data: { id, projectId } });
  return uploadFields(id, await deps.store.presignPut(uploadKey(projectId, id), deps.uploadWindowSeconds ?? UPLOAD_WINDOW_SECONDS));
}

export async function findContext(db: Db, projectIds: string[], id: string) {
  const row = await db.context.findUnique({ where: { id } });
  if (!row || !projectIds.includes(row.projectId)) throw new NotFound(`context ${id} not found`);
  return row;
}

export async function getContext(deps: ContextDeps, auth: KeyAuth, id: string) {
  const row = await findContext(deps.db, auth.projectIds, id);
  // A client upload changes the profile too, though it does not pass through Caravan.
  const upload = await deps.store.head(uploadKey(row.projectId, id));
  const updatedAt = upload && upload.updatedAt > row.updatedAt ? upload.updatedAt : row.updatedAt;
  return { id, projectId: row.projectId, createdAt: row.createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
}

export async function refreshUploadUrl(deps: ContextDeps, auth: KeyAuth, id: string) {
  const row = await findContext(deps.db, auth.projectIds, id);
  return uploadFields(id, await deps.store.presignPut(uploadKey(row.projectId, id), deps.uploadWindowSeconds ?? UPLOAD_WINDOW_SECONDS));
}

/**
 * Checks the staged archive at `from` and, when it is sound, makes it the context's profile.
 * A bad one is deleted and the previous profile stays. Returns the reason when refused.
 */
export async function promote(deps: ContextDeps, projectId: string, contextId: string, from: string): Promise<string | null> {
  const url = await deps.store.presignGet(from, 120);
  const res = await fetch(url);
  if (!res.ok || !res.body) return `the staged archive could not be read (HTTP ${res.status})`;
  try {
    await validateArchive(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), deps.maxArchiveBytes);
  } catch (err) {
    await deps.store.delete(from).catch(() => undefined);
    return (err as Error).message;
  }
  await deps.store.copy(from, archiveKey(projectId, contextId));
  await deps.store.delete(from);
  await deps.db.context.update({ where: { id: contextId }, data: { savedAt: new Date() } });
  return null;
}
