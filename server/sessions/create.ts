// Creates a session: validates, admits it under the project's concurrency limit, asks the
// scheduler for a browser and waits (up to the ready-wait limit) until the browser is ready.
import crypto from 'node:crypto';
import { CreateSessionBody } from '../../schema/rest.ts';
import { InternalStatus, LIVE_STATUSES } from '../../schema/states.ts';
import type { KeyAuth } from '../auth/apiKeys.ts';
import { resolveProject } from '../auth/apiKeys.ts';
import { signCdpToken, signLauncherToken } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { GatewayTimeout, Invalid, LimitReached, NotFound, ServiceError } from '../errors.ts';
import type { SessionChange } from '../events/bus.ts';
import { parseInput } from '../validate.ts';
import { attachContext, checkPersistFree, ContextUnusable, releaseContextLock } from '../contexts/attach.ts';
import { findContext } from '../contexts/contexts.ts';
import { transition } from './transition.ts';
import { Prisma } from '../db/client.ts';
import { sessionView, type SessionView } from './view.ts';

export async function createSession(deps: Deps, auth: KeyAuth, input: unknown, headerProject?: string, clientIp?: string): Promise<SessionView> {
  const body = parseInput(CreateSessionBody, input);
  const projectId = resolveProject(auth, body.projectId, headerProject);
  const max = deps.config.SERVICE_MAX_SESSION_TIMEOUT;
  if (body.timeout !== undefined && body.timeout > max) throw new Invalid(`timeout must be <= ${max} seconds (SERVICE_MAX_SESSION_TIMEOUT)`);
  const context = body.browserSettings?.context;
  if (context) {
    await findContext(deps.db, [projectId], context.id);
    await checkPersistFree(deps, context.id, context.persist ?? false);
  }

  const id = `sess_${crypto.randomUUID()}`;
  const nowMs = deps.clock.now();
  const issuedAt = Math.floor(nowMs / 1000);
  const userId = typeof body.userMetadata?.userId === 'string' ? body.userMetadata.userId : undefined;
  const browserSettings = body.browserSettings ?? {};

  // One transaction admits the session and stores it, with its token, as CREATING then
  // PROVISIONING (READY is accepted only from PROVISIONING, and a warm launcher may report it at
  // once); the browser is requested right after commit.
  const { expiresAt, changes } = await admit(deps, projectId, async (project) => {
    const timeout = body.timeout ?? Math.min(project.defaultTimeout, max);
    const expiresAt = issuedAt + timeout;
    const signingKey = await signCdpToken(deps.secrets, { sessionId: id, projectId, issuedAt, expiresAt, ...(userId ? { userId } : {}), ...(clientIp ? { ipAddress: clientIp } : {}) });
    const row: NewSession = {
      id, projectId, keepAlive: body.keepAlive ?? false, region: body.region ?? 'us-east-1', timeout,
      userMetadata: body.userMetadata ?? {}, browserSettings, signingKey, expiresAt,
      contextId: context?.id ?? null, contextPersist: context?.persist ?? false,
    };
    return { row, expiresAt };
  });
  for (const change of changes) await deps.bus.publish(change);
  const log = deps.log.child({ sessionId: id, projectId });

  const settled = waitForSettled(deps, id, deps.config.SERVICE_READY_WAIT_MS);
  try {
    const launchContext = context ? await attachContext(deps, { id, projectId, expiresAt }, { id: context.id, persist: context.persist ?? false }) : undefined;
    const launcherToken = await signLauncherToken(deps.secrets, id, expiresAt);
    const placement = await deps.scheduler.start({
      sessionId: id, projectId, keepAlive: body.keepAlive ?? false, launcherToken, controlUrl: deps.controlUrl(),
      ...(browserSettings.viewport ? { viewport: browserSettings.viewport } : {}),
      ...(launchContext ? { context: launchContext } : {}),
    });
    await deps.db.session.updateMany({ where: { id }, data: { taskRef: placement.taskRef, nodeId: placement.nodeId } });
  } catch (err) {
    settled.cancel();
    const message = err instanceof Error ? err.message : String(err);
    log.warn({ err }, 'scheduler could not place the session');
    await transition(deps, id, 'FAILED', { reason: 'FAILED', message });
    await releaseContextLock(deps, id);
    if (err instanceof ContextUnusable) throw new Invalid(`${message} (session ${id} ended in ERROR)`);
    throw err instanceof ServiceError ? err : new ServiceError(500, `could not start a browser: ${message}`);
  }

  const tPlaced = deps.clock.now();
  const outcome = await settled.promise;
  const row = await deps.db.session.findUnique({ where: { id } });
  if (outcome === 'timeout' || !row) {
    await endAfterReadyWait(deps, id);
    throw new GatewayTimeout(`the browser was not ready within ${deps.config.SERVICE_READY_WAIT_MS / 1000} s; the session ${id} was ended, retry the create`);
  }
  if (row.status === 'FAILED' || row.status === 'STOPPED') {
    throw new ServiceError(500, `the browser failed to start: ${row.errorMessage ?? row.endReason ?? 'unknown reason'} (session ${id})`);
  }
  log.info({ ms: deps.clock.now() - nowMs, placeMs: tPlaced - nowMs }, 'session ready');
  return sessionView(row, 0, { secrets: true });
}

interface AdmittedProject {
  concurrency: number;
  defaultTimeout: number;
}

interface NewSession {
  id: string;
  projectId: string;
  keepAlive: boolean;
  region: string;
  timeout: number;
  userMetadata: object;
  browserSettings: object;
  signingKey: string;
  expiresAt: number;
  contextId: string | null;
  contextPersist: boolean;
}

/**
 * Race-free admission: the project row is locked, then one statement (with a snapshot taken
 * after the lock) counts the live sessions and, under the limit, inserts the session with its
 * CREATING and PROVISIONING changes and its usage row. Four round trips in all.
 */
async function admit<T extends { row: NewSession }>(deps: Deps, projectId: string, build: (project: AdmittedProject) => Promise<T>): Promise<T & { changes: SessionChange[] }> {
  return deps.db.$transaction(async (tx) => {
    const [project] = await tx.$queryRaw<AdmittedProject[]>`SELECT concurrency, "defaultTimeout" FROM "Project" WHERE id = ${projectId} FOR UPDATE`;
    if (!project) throw new NotFound(`project ${projectId} not found`);
    const built = await build(project);
    const s = built.row;
    const now = new Date(deps.clock.now());
    const [result] = await tx.$queryRaw<Array<{ running: number; events: Array<{ seq: string; to: string }> }>>`
      WITH live AS (
        SELECT count(*)::int AS n FROM "Session" WHERE "projectId" = ${projectId} AND status IN (${Prisma.join(LIVE_STATUSES)})
      ), ins AS (
        INSERT INTO "Session" (id, "projectId", status, "keepAlive", region, timeout, "userMetadata", "browserSettings",
                               "signingKey", "expiresAt", "createdAt", "updatedAt", "contextId", "contextPersist")
        SELECT ${s.id}, ${projectId}, 'PROVISIONING', ${s.keepAlive}, ${s.region}, ${s.timeout}, ${JSON.stringify(s.userMetadata)}::jsonb,
               ${JSON.stringify(s.browserSettings)}::jsonb, ${s.signingKey}, ${BigInt(s.expiresAt)}, ${now}, ${now}, ${s.contextId}::text, ${s.contextPersist}
        FROM live WHERE live.n < ${project.concurrency}
        RETURNING id
      ), ev AS (
        INSERT INTO "SessionEvent" ("sessionId", "projectId", "from", "to", reason, "createdAt")
        SELECT ins.id, ${projectId}, e."from", e."to", e.reason, ${now}
        FROM ins CROSS JOIN (VALUES (1, NULL::text, 'CREATING', NULL::text), (2, 'CREATING', 'PROVISIONING', 'PLACED')) AS e(ord, "from", "to", reason)
        ORDER BY e.ord
        RETURNING seq, "to"
      ), usage AS (
        INSERT INTO "Usage" ("sessionId", "projectId", "startedAt") SELECT id, ${projectId}, ${now} FROM ins
      )
      SELECT (SELECT n FROM live) AS running,
             COALESCE((SELECT json_agg(json_build_object('seq', seq::text, 'to', "to") ORDER BY seq) FROM ev), '[]'::json) AS events`;
    if (!result || result.events.length === 0) {
      const running = result?.running ?? 0;
      throw new LimitReached(`project ${projectId} is at its concurrency limit: ${running} of ${project.concurrency} sessions running; release one or raise the project's concurrency`);
    }
    const changes: SessionChange[] = result.events.map((e, i) => ({
      seq: e.seq, sessionId: s.id, projectId, from: i === 0 ? null : 'CREATING', to: InternalStatus.parse(e.to), reason: i === 0 ? null : 'PLACED',
    }));
    return { ...built, changes };
  }, { maxWait: 15_000, timeout: 15_000 });
}

function waitForSettled(deps: Deps, id: string, ms: number) {
  let unsubscribe = (): void => undefined;
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<'settled' | 'timeout'>((resolve) => {
    unsubscribe = deps.bus.subscribe((c: SessionChange) => {
      if (c.sessionId === id && ['READY', 'RUNNING', 'FAILED', 'STOPPED'].includes(c.to)) resolve('settled');
    });
    timer = setTimeout(() => resolve('timeout'), ms);
  }).finally(() => {
    clearTimeout(timer);
    unsubscribe();
  });
  return {
    promise,
    cancel: () => {
      clearTimeout(timer);
      unsubscribe();
    },
  };
}

async function endAfterReadyWait(deps: Deps, id: string) {
  await releaseContextLock(deps, id);
  const row = await transition(deps, id, 'FAILED', { reason: 'READY_WAIT_EXPIRED', message: 'the browser was not ready within the ready-wait limit' });
  const taskRef = row?.taskRef;
  if (taskRef) void deps.scheduler.stop(taskRef).catch((err) => deps.log.warn({ err, sessionId: id }, 'stop after ready wait failed'));
}
