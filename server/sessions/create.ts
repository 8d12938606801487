// Creates a session: validates, admits it under the project's concurrency limit, asks the
// scheduler for a browser and waits (up to the ready-wait limit) until the browser is ready.
import crypto from 'node:crypto';
import { CreateSessionBody } from '../../schema/rest.ts';
import { LIVE_STATUSES } from '../../schema/states.ts';
import type { KeyAuth } from '../auth/apiKeys.ts';
import { resolveProject } from '../auth/apiKeys.ts';
import { signCdpToken, signLauncherToken } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { GatewayTimeout, Invalid, LimitReached, NotFound, ServiceError } from '../errors.ts';
import type { SessionChange } from '../events/bus.ts';
import { parseInput } from '../validate.ts';
import { attachContext, checkPersistFree, ContextUnusable, releaseContextLock } from '../contexts/attach.ts';
import { findContext } from '../contexts/contexts.ts';
import { transition, transitionIn } from './transition.ts';
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

  // One transaction admits the session, stores it with its token and records CREATING and
  // PROVISIONING (the token is generated and the task is requested right after commit).
  const { expiresAt, changes } = await admit(deps, projectId, async (tx, now, project) => {
    const timeout = body.timeout ?? Math.min(project.defaultTimeout, max);
    const expiresAt = issuedAt + timeout;
    const signingKey = await signCdpToken(deps.secrets, { sessionId: id, projectId, issuedAt, expiresAt, ...(userId ? { userId } : {}), ...(clientIp ? { ipAddress: clientIp } : {}) });
    await tx.session.create({
      data: {
        id, projectId, status: 'CREATING', keepAlive: body.keepAlive ?? false, region: body.region ?? 'us-east-1',
        timeout, userMetadata: (body.userMetadata ?? {}) as object, browserSettings: browserSettings as object,
        signingKey, expiresAt: BigInt(expiresAt), createdAt: now, updatedAt: now,
        contextId: context?.id ?? null, contextPersist: context?.persist ?? false,
      },
    });
    const created = await tx.sessionEvent.create({ data: { sessionId: id, projectId, from: null, to: 'CREATING', createdAt: now } });
    await tx.usage.create({ data: { sessionId: id, projectId, startedAt: now } });
    // READY is accepted only from PROVISIONING, and a warm launcher may report it at once.
    const provisioning = await transitionIn(tx, deps.clock, id, 'PROVISIONING', { reason: 'PLACED' });
    const changes: SessionChange[] = [
      { seq: created.seq.toString(), sessionId: id, projectId, from: null, to: 'CREATING', reason: null },
      ...(provisioning ? [provisioning.change] : []),
    ];
    return { expiresAt, changes };
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

type Tx = Parameters<Parameters<Deps['db']['$transaction']>[0]>[0];

interface AdmittedProject {
  concurrency: number;
  defaultTimeout: number;
}

/** Race-free admission: the project row is locked while live sessions are counted. */
async function admit<T>(deps: Deps, projectId: string, insert: (tx: Tx, now: Date, project: AdmittedProject) => Promise<T>): Promise<T> {
  return deps.db.$transaction(async (tx) => {
    const [project] = await tx.$queryRaw<AdmittedProject[]>`SELECT concurrency, "defaultTimeout" FROM "Project" WHERE id = ${projectId} FOR UPDATE`;
    if (!project) throw new NotFound(`project ${projectId} not found`);
    const running = await tx.session.count({ where: { projectId, status: { in: LIVE_STATUSES } } });
    if (running >= project.concurrency) {
      throw new LimitReached(`project ${projectId} is at its concurrency limit: ${running} of ${project.concurrency} sessions running; release one or raise the project's concurrency`);
    }
    return insert(tx, new Date(deps.clock.now()), project);
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
