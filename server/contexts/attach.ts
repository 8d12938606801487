// Attaching a context to a new session: the persist lock, promotion of a pending upload, and
// the short-lived URLs the launcher fetches and saves the profile with (launchers hold no
// storage credentials).
import { LIVE_STATUSES, type InternalStatus } from '../../schema/states.ts';
import type { Deps } from '../deps.ts';
import { Conflict } from '../errors.ts';
import { archiveKey, promote, saveKey, uploadKey } from './contexts.ts';

export interface LaunchContext {
  getUrl?: string;
  putUrl?: string;
  maxBytes: number;
}

/** How long a new session waits for the previous persisting session's save. */
const SAVE_WAIT_MS = 30_000;
/** A lock whose holder ended this long ago is stale (its launcher vanished before saving). */
const STALE_AFTER_MS = 60_000;

export class ContextUnusable extends Error {}

/** The context's lock as stored, and the session holding it when that still counts (live, or
 *  ended recently enough that its save may be on the way). */
async function holder(deps: Deps, contextId: string): Promise<{ lockedBy: string | null; active: { id: string; live: boolean } | null }> {
  const ctx = await deps.db.context.findUnique({ where: { id: contextId }, select: { lockedBy: true } });
  const lockedBy = ctx?.lockedBy ?? null;
  if (!lockedBy) return { lockedBy, active: null };
  const s = await deps.db.session.findUnique({ where: { id: lockedBy }, select: { id: true, status: true, endedAt: true } });
  if (!s) return { lockedBy, active: null };
  const live = LIVE_STATUSES.includes(s.status as InternalStatus);
  const stale = !live && s.endedAt !== null && deps.clock.now() - s.endedAt.getTime() > STALE_AFTER_MS;
  return { lockedBy, active: stale ? null : { id: s.id, live } };
}

/** Refuses a second persisting session while one is live (409); nothing is written. */
export async function checkPersistFree(deps: Deps, contextId: string, persist: boolean): Promise<void> {
  const h = (await holder(deps, contextId)).active;
  if (persist && h?.live) {
    throw new Conflict(`context ${contextId} is attached with persist: true by running session ${h.id}; release it first, or attach with persist: false to read it`);
  }
}

export async function attachContext(deps: Deps, session: { id: string; projectId: string; expiresAt: number }, ctx: { id: string; persist: boolean }): Promise<LaunchContext> {
  // A session that ended moments ago may still be saving: wait so that we read its save.
  const deadline = Date.now() + SAVE_WAIT_MS;
  let seen: string | null;
  for (;;) {
    const { lockedBy, active: h } = await holder(deps, ctx.id);
    seen = lockedBy;
    if (!h || h.id === session.id) break;
    if (h.live) {
      if (ctx.persist) throw new Conflict(`context ${ctx.id} is attached with persist: true by running session ${h.id}`);
      break;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (ctx.persist) {
    // Compare-and-swap on the lock as read above: a session that took it meanwhile wins.
    const taken = await deps.db.context.updateMany({
      where: { id: ctx.id, lockedBy: seen },
      data: { lockedBy: session.id, lockedAt: new Date(deps.clock.now()) },
    });
    if (taken.count === 0) throw new Conflict(`context ${ctx.id} was just attached with persist: true by another session`);
  }

  const store = deps.store;
  const maxBytes = deps.config.CONTEXT_MAX_BYTES;
  if (await store.head(uploadKey(session.projectId, ctx.id))) {
    const refused = await promote({ db: deps.db, store, maxArchiveBytes: maxBytes }, session.projectId, ctx.id, uploadKey(session.projectId, ctx.id));
    if (refused) throw new ContextUnusable(`the uploaded archive of context ${ctx.id} was refused: ${refused}; the previous profile is kept; upload a new one with PUT /v1/contexts/${ctx.id}`);
  }
  const archive = await store.head(archiveKey(session.projectId, ctx.id));
  const row = await deps.db.context.findUnique({ where: { id: ctx.id }, select: { savedAt: true } });
  const out: LaunchContext = { maxBytes };
  if (archive) {
    if (archive.size > maxBytes) throw new ContextUnusable(`the archive of context ${ctx.id} is ${archive.size} bytes, over the limit of ${maxBytes} (CONTEXT_MAX_BYTES)`);
    out.getUrl = await store.presignGet(archiveKey(session.projectId, ctx.id), 120);
  } else if (row?.savedAt) {
    throw new ContextUnusable(`the archive of context ${ctx.id} is missing from object storage`);
  }
  if (ctx.persist) {
    const seconds = Math.max(60, session.expiresAt - Math.floor(deps.clock.now() / 1000) + 15 * 60);
    out.putUrl = await store.presignPut(saveKey(session.projectId, ctx.id, session.id), seconds);
  }
  return out;
}

export async function releaseContextLock(deps: Pick<Deps, 'db'>, sessionId: string): Promise<void> {
  await deps.db.context.updateMany({ where: { lockedBy: sessionId }, data: { lockedBy: null, lockedAt: null } });
}

/** A launcher saved the profile of a persisting session: promote it if it checks out. */
export async function contextSaved(deps: Deps, sessionId: string): Promise<string | null> {
  const s = await deps.db.session.findUnique({ where: { id: sessionId }, select: { projectId: true, contextId: true, contextPersist: true } });
  if (!s?.contextId || !s.contextPersist) return 'this session has no context attached with persist: true';
  const refused = await promote({ db: deps.db, store: deps.store, maxArchiveBytes: deps.config.CONTEXT_MAX_BYTES }, s.projectId, s.contextId, saveKey(s.projectId, s.contextId, sessionId));
  if (refused) deps.log.warn({ sessionId, contextId: s.contextId, refused }, 'context save refused; the previous profile is kept');
  await releaseContextLock(deps, sessionId);
  return refused;
}
