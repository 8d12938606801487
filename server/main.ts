// Composition root of the control plane: builds every collaborator from the config once and
// returns { start, stop, address }. Each collaborator can be replaced through the options.
import fs from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { createAgent, type Agent } from '../agent/agent.ts';
import { cachedSecret, type SecretSource } from '../schema/token.ts';
import { createApiKey, ensureApiKey, keyCache } from './auth/apiKeys.ts';
import { LIVE_STATUSES } from '../schema/states.ts';
import { envSecret, fileSecret } from './auth/secret.ts';
import { inheritedEnv, type Config } from './config.ts';
import { createDb, type Db } from './db/client.ts';
import { startEmbeddedPostgres, type EmbeddedDb } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { systemClock, type Clock, type Deps } from './deps.ts';
import { memoryBus, postgresBus, type EventBus } from './events/bus.ts';
import { registerGraphQL } from './graphql/index.ts';
import { createHttp } from './http.ts';
import { ensureProject } from './projects/projects.ts';
import { registerRest } from './rest/index.ts';
import { createRuntime, registerRuntime, type RuntimeOptions } from './runtime/runtime.ts';
import { localScheduler, type LocalScheduler } from './scheduler/local.ts';
import { bundleLauncher } from './scheduler/launcherBundle.ts';
import { findSocat } from '../agent/proxy/relay.ts';
import { resolveProfileRoot, sweepLauncherDirs } from '../agent/launcher/profileRoot.ts';
import { startNomadScheduler } from './scheduler/nomad/index.ts';
import type { Scheduler } from './scheduler/types.ts';
import { endSession } from './sessions/end.ts';
import { applyNodeSignals, applySessionReport } from './sessions/reports.ts';
import { startReaper } from './sessions/reaper.ts';
import { EMBEDDED_BUCKET, EMBEDDED_CREDENTIALS, startEmbeddedS3 } from './storage/embedded.ts';
import { s3Store, type ObjectStore } from './storage/objectStore.ts';
import { releaseContextLock } from './contexts/attach.ts';
import { registerTrpc } from './trpc/index.ts';
import { registerWeb } from './web.ts';

const SHUTDOWN_STEP_MS = 5_000;

export interface ServerOptions {
  config: Config;
  log?: Logger;
  clock?: Clock;
  /** Replaces the configured scheduler (tests use a stand-in that reports like a launcher). */
  scheduler?: (deps: Omit<Deps, 'scheduler'>) => Scheduler;
  secrets?: SecretSource;
  /** Replaceable parts of the operator runtime (mDNS advertiser, tunnel timings). */
  runtime?: RuntimeOptions;
}

export interface CaravanServer {
  start(): Promise<void>;
  stop(): Promise<void>;
  address(): { url: string; port: number };
  deps(): Deps;
}

export function createServer(opts: ServerOptions): CaravanServer {
  const { config } = opts;
  const log = opts.log ?? pino({ level: config.LOG_LEVEL });
  let url = '';
  let port = 0;
  let deps: Deps | undefined;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];

  async function start() {
    let databaseUrl = config.DATABASE_URL;
    let embedded: EmbeddedDb | undefined;
    if (!databaseUrl) {
      embedded = await startEmbeddedPostgres(path.join(config.dataDir), log);
      cleanups.push(() => embedded?.stop());
      databaseUrl = embedded.url;
    }
    await migrate(databaseUrl, log);
    const database = createDb(databaseUrl, log);
    const db: Db = database.db;
    cleanups.push(() => database.close());
    const busKind = config.EVENT_BUS ?? (config.DATABASE_URL ? 'postgres' : 'memory');
    const bus: EventBus = busKind === 'postgres' ? await postgresBus(databaseUrl, log) : memoryBus();
    cleanups.push(() => bus.close());
    const secrets = cachedSecret(opts.secrets ?? (config.SERVICE_JWT_SIGNING_KEY ? envSecret(config.SERVICE_JWT_SIGNING_KEY) : fileSecret(config.dataDir)));
    // Made (or read) now, so a bad data dir fails the start, not the first session.
    await secrets.get();

    const store = await openObjectStore(config, log, cleanups);
    const base: Omit<Deps, 'scheduler'> = {
      db, bus, secrets, store, log, clock: opts.clock ?? systemClock, keyCache: keyCache(),
      config: {
        SERVICE_MAX_SESSION_TIMEOUT: config.SERVICE_MAX_SESSION_TIMEOUT,
        SERVICE_READY_WAIT_MS: config.SERVICE_READY_WAIT_MS,
        SESSION_RECORD_RETENTION: config.SESSION_RECORD_RETENTION,
        CONTEXT_MAX_BYTES: config.CONTEXT_MAX_BYTES,
        CONTEXT_UPLOAD_WINDOW: config.CONTEXT_UPLOAD_WINDOW,
      },
      controlUrl: () => url,
    };
    const makeScheduler = opts.scheduler;
    // SCHEDULER=nomad: no node in this process; agents run on the Nomad clients.
    const nomad = !makeScheduler && config.SCHEDULER === 'nomad';
    let localAgent: Agent | undefined;
    const local = makeScheduler || nomad ? undefined : await startLocalNode(base, config, log, cleanups, () => deps, (a) => (localAgent = a));
    const scheduler: Scheduler = makeScheduler
      ? makeScheduler(base)
      : nomad ? await startNomadScheduler(base, config, log, cleanups, () => deps) : (local as LocalScheduler);
    deps = { ...base, scheduler };
    const d = deps;

    if (config.SERVICE_BOOTSTRAP_API_KEY && config.SERVICE_BOOTSTRAP_PROJECT_ID) {
      await ensureProject(db, config.SERVICE_BOOTSTRAP_PROJECT_ID);
      await ensureApiKey(db, config.SERVICE_BOOTSTRAP_API_KEY, config.SERVICE_BOOTSTRAP_PROJECT_ID);
    } else {
      await firstRunKey(db, config.dataDir, log);
    }
    if (local) await failOrphans(d, config.CARAVAN_NODE_ID);

    // Operator runtime: settings applied before the listener opens; its access hook goes on
    // the app before any route so that it covers every one.
    const runtime = createRuntime({
      deps: d, config, log, options: opts.runtime, tunnelEnv: inheritedEnv(),
      serverUrl: () => url, serverPort: () => port,
      pool: () => local?.pooled() ?? null,
      liveView: () => (localAgent ? (sessionId, spec) => localAgent!.startScreencast(sessionId, spec) : undefined),
    });
    await runtime.start();
    const app = createHttp(log);
    registerRuntime(app, runtime);
    registerRest(app, d);
    registerGraphQL(app, d, runtime);
    registerTrpc(app, d, config);
    registerWeb(app);
    cleanups.push(() => app.close());
    await app.listen({ host: config.DASHBOARD_HOST, port: config.DASHBOARD_PORT });
    const addr = app.server.address();
    port = typeof addr === 'object' && addr ? addr.port : config.DASHBOARD_PORT;
    const host = config.DASHBOARD_HOST === '0.0.0.0' || config.DASHBOARD_HOST === '::' ? '127.0.0.1' : config.DASHBOARD_HOST;
    url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    // Stopped after the browsers (scheduler.close) and before the listener closes: shares,
    // activity streams, then the tunnel child (SIGTERM, SIGKILL after 3 s).
    runtime.startEntrypoint();
    cleanups.push(() => runtime.stop());
    cleanups.push(startReaper(d, config.REAPER_INTERVAL_MS));
    local?.warmUp();
    log.info({ url, database: embedded ? 'embedded' : 'external', bus: busKind }, 'caravan control plane listening');
  }

  async function stop() {
    // End browsers first, while their launchers can still report, then stop taking work
    // (reaper, HTTP) and close the database.
    await deps?.scheduler.close().catch((err) => log.warn({ err }, 'stopping browsers failed'));
    for (const fn of cleanups.reverse()) {
      // A step that hangs (a request still holding a database connection) must not keep the
      // process, and the embedded database behind it, alive: each step gets a bounded time.
      let timer: NodeJS.Timeout | undefined;
      const bounded = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          log.warn({ step: fn.toString().slice(0, 80) }, 'shutdown step did not finish in time; going on');
          resolve();
        }, SHUTDOWN_STEP_MS);
      });
      await Promise.race([Promise.resolve().then(fn).catch((err) => log.warn({ err }, 'shutdown step failed')), bounded]);
      clearTimeout(timer);
    }
    cleanups.length = 0;
  }

  return {
    start,
    stop,
    address: () => ({ url, port }),
    deps: () => {
      if (!deps) throw new Error('server not started');
      return deps;
    },
  };
}

/** S3 when an endpoint or bucket is configured; otherwise the embedded S3 server. One code
 *  path (the S3 protocol) serves both. */
async function openObjectStore(config: Config, log: Logger, cleanups: Array<() => unknown>): Promise<ObjectStore> {
  if (config.S3_ENDPOINT || config.S3_BUCKET) {
    if (!config.S3_BUCKET) throw new Error('S3_ENDPOINT is set but S3_BUCKET is not: name the bucket that holds contexts');
    return s3Store({
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
      forcePathStyle: config.S3_FORCE_PATH_STYLE ?? Boolean(config.S3_ENDPOINT),
      ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
    });
  }
  const embedded = await startEmbeddedS3(config.dataDir, log);
  cleanups.push(() => embedded.stop());
  return s3Store({ endpoint: embedded.endpoint, region: 'us-east-1', bucket: EMBEDDED_BUCKET, forcePathStyle: true, credentials: EMBEDDED_CREDENTIALS }, true);
}

/** On a first start with no key at all, makes a `default` project and a key, written to a
 *  0600 file under the data dir (never to the log). */
async function firstRunKey(db: Db, dataDir: string, log: Logger): Promise<void> {
  if ((await db.apiKey.count()) > 0) return;
  await ensureProject(db, 'default');
  const { key } = await createApiKey(db, ['default']);
  const file = path.join(dataDir, 'api-key');
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(file, key + '\n', { mode: 0o600 });
  log.info({ file, projectId: 'default' }, 'first start: created project "default" and an API key; read it from the file');
}

/** Sessions this node held before a restart have lost their browsers: end them in ERROR. */
async function failOrphans(deps: Deps, nodeId: string): Promise<void> {
  const live = await deps.db.session.findMany({ where: { nodeId, status: { in: LIVE_STATUSES } }, select: { id: true } });
  for (const s of live) await endSession(deps, s.id, 'FAILED', 'NODE_DOWN', 'the control plane restarted and the browser was lost');
}

/** The embedded default: a node agent in this process and launchers as child processes. */
async function startLocalNode(base: Omit<Deps, 'scheduler'>, config: Config, log: Logger, cleanups: Array<() => unknown>, getDeps: () => Deps | undefined, onAgent?: (agent: Agent) => void): Promise<LocalScheduler> {
  const nodeId = config.CARAVAN_NODE_ID;
  const workDir = path.join(config.dataDir, 'browsers');
  await fs.mkdir(workDir, { recursive: true });
  const profiles = await resolveProfileRoot(config.BROWSER_PROFILE_DIR, workDir, config.dataDir);
  // Launchers of an earlier run are gone (they end with this process); a crash left their dirs.
  const swept = (await sweepLauncherDirs(workDir)) + (profiles.dir === workDir ? 0 : await sweepLauncherDirs(profiles.dir));
  // The directory auto made in /dev/shm goes when it is empty again (every launcher removes its own).
  if (profiles.dir !== workDir && config.BROWSER_PROFILE_DIR === 'auto') cleanups.push(() => fs.rmdir(profiles.dir).catch(() => undefined));
  log.info({ profileDir: profiles.dir, inMemory: profiles.inMemory, ...(profiles.note ? { why: profiles.note } : {}), ...(swept ? { swept } : {}) }, 'browser profiles');
  const agent = createAgent({
    nodeId,
    publicHost: config.AGENT_PUBLIC_HOST,
    bindHost: config.AGENT_BIND_HOST ?? (/^(127\.|localhost$|::1$)/.test(config.AGENT_PUBLIC_HOST) ? '127.0.0.1' : '0.0.0.0'),
    cdpPort: config.AGENT_CDP_PORT,
    controlPort: config.AGENT_CONTROL_PORT,
    webdriverPort: config.AGENT_WEBDRIVER_PORT,
    chromedriverPath: config.CHROMEDRIVER_PATH,
    ...(config.AGENT_TLS_CERT && config.AGENT_TLS_KEY ? { tls: { cert: await fs.readFile(config.AGENT_TLS_CERT), key: await fs.readFile(config.AGENT_TLS_KEY) } } : {}),
    idleGraceMs: config.AGENT_IDLE_GRACE_MS,
    socat: findSocat(config.AGENT_RELAY, config.PATH),
    secrets: base.secrets,
    signals: async (list) => {
      const deps = getDeps();
      if (deps) await applyNodeSignals(deps, nodeId, list);
    },
    log: log.child({ nodeId }),
  });
  await agent.start();
  onAgent?.(agent);
  const addr = agent.address();
  await base.db.node.upsert({
    where: { id: nodeId },
    create: { id: nodeId, name: nodeId, publicHost: config.AGENT_PUBLIC_HOST, cdpPort: addr.cdpPort, webdriverPort: addr.webdriverPort ?? null, tls: Boolean(config.AGENT_TLS_CERT), capacity: config.NODE_CAPACITY, status: 'UP' },
    update: { publicHost: config.AGENT_PUBLIC_HOST, cdpPort: addr.cdpPort, webdriverPort: addr.webdriverPort ?? null, tls: Boolean(config.AGENT_TLS_CERT), capacity: config.NODE_CAPACITY, status: 'UP', lastSeenAt: new Date() },
  });
  const scheduler = localScheduler({
    nodeId,
    capacity: config.NODE_CAPACITY,
    poolSize: config.POOL_SIZE,
    spareLaunchers: config.POOL_SPARE_LAUNCHERS,
    chromePath: config.CHROME_PATH,
    workDir,
    ...(profiles.dir === workDir ? {} : { profileDir: profiles.dir }),
    launcher: bundleLauncher(),
    controlUrl: base.controlUrl,
    agentUrl: () => agent.address().controlUrl,
    onReady: async (sessionId, route, browser) => {
      const deps = getDeps();
      if (!deps) return false;
      agent.routes.add(route);
      const accepted = await applySessionReport(deps, { sessionId, nodeId, status: 'READY', browser }).catch((err: unknown) => {
        agent.routes.remove(sessionId);
        throw err;
      });
      if (!accepted) agent.routes.remove(sessionId);
      return accepted;
    },
    log,
    logLevel: config.LOG_LEVEL,
    baseEnv: inheritedEnv(),
    onExit: (sessionId, info) => {
      const deps = getDeps();
      if (!deps) return;
      const message = info.signal ? `the browser launcher was killed (${info.signal})` : `the browser launcher exited with code ${info.code}`;
      // A launcher that ends on its own (not asked to stop) fails its session.
      void releaseContextLock(deps, sessionId).catch(() => undefined);
      if (!info.stopping) void endSession(deps, sessionId, 'FAILED', 'BROWSER_EXITED', message).catch((err) => log.warn({ err, sessionId }, 'could not record launcher exit'));
    },
  });
  cleanups.push(() => agent.stop());
  cleanups.push(() => scheduler.close());
  return scheduler;
}
