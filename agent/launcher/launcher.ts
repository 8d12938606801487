// One session's browser launcher: start Chromium, register its route with the node agent, report
// READY; on stop close the browser cleanly and report STOPPED; if the browser dies, report FAILED.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { BrowserInfo, RouteRegistration, SessionAssignment, SessionReport } from '../../schema/agent.ts';
import { ProfileError, restoreProfile, saveProfile } from './profile.ts';
import type { LauncherConfig } from '../config.ts';
import { controlPlaneClient, type ControlPlaneClient } from '../report.ts';
import { launchChromium, setViewport, type Chromium, type Exit } from './chromium.ts';
import { LAUNCHER_DIR_PREFIX } from './profileRoot.ts';

export interface LauncherDeps {
  log: Logger;
  /** Pool and standby mode: resolves with the session once the scheduler hands this launcher out. */
  assignment?: Promise<SessionAssignment>;
  /** Pool mode: called once the browser is up and waiting for a session. */
  onPoolReady?: (pid: number) => void;
  /** Standby mode: called once the launcher waits for its session (no browser started yet). */
  onStandby?: () => void;
  /** Local scheduler: READY goes to it instead of the route PUT and the GraphQL report; it
   *  registers the route and records READY, and resolves with whether READY was accepted. */
  reportReady?: (sessionId: string, browser: BrowserInfo) => Promise<boolean>;
  /** Replaceable for tests; defaults to a GraphQL client of config.controlUrl with the launcher token. */
  controlPlane?: ControlPlaneClient;
  /** Start-to-CDP limit; default 30 s. */
  launchTimeoutMs?: number;
  /** How long a clean Browser.close may take before SIGKILL; default 5 s. */
  closeTimeoutMs?: number;
}

export interface ReadyInfo {
  pid: number;
  port: number;
  wsPath: string;
  version: string;
  userDataDir: string;
  /** Milliseconds from runLauncher() to the READY report being accepted. */
  readyMs: number;
}

export interface LauncherHandle {
  /** Resolves once READY was reported; rejects if the launch failed or was stopped first. */
  ready: Promise<ReadyInfo>;
  /** Resolves with the process exit code (0 stopped, 1 failed) when the launcher is done. */
  done: Promise<number>;
  /** Asks for a clean stop (SIGTERM, SIGINT, stdin closed); resolves like `done`. */
  stop(reason: string): Promise<number>;
  /** Last resort when this process is about to die: SIGKILL the browser so that it is not orphaned. */
  killBrowser(): void;
}

const STOP_REPORT_TIMEOUT_MS = 3_000;
const AGENT_TIMEOUT_MS = 5_000;

export function runLauncher(config: LauncherConfig, deps: LauncherDeps): LauncherHandle {
  const t0 = performance.now();
  // A pooled launcher learns its session only after its browser is up; these are bound then.
  let session = { sessionId: config.sessionId, launcherToken: config.launcherToken, keepAlive: config.keepAlive };
  // A standby launcher learns these with its session.
  let { viewport } = config;
  let context: SessionAssignment['context'] | LauncherConfig['context'] = config.context;
  let log = deps.log.child({ ...(config.pool ? { pooled: true } : config.standby ? { standby: true } : { sessionId: config.sessionId }), ...(config.nodeId ? { nodeId: config.nodeId } : {}) });
  const clients = () => ({
    controlPlane: deps.controlPlane ?? controlPlaneClient(config.controlUrl, session.launcherToken),
    quickControlPlane: deps.controlPlane ?? controlPlaneClient(config.controlUrl, session.launcherToken, { timeoutMs: STOP_REPORT_TIMEOUT_MS }),
    routeUrl: `${config.agentUrl}/routes/${encodeURIComponent(session.sessionId)}`,
    auth: { Authorization: `Bearer ${session.launcherToken}` },
  });
  let { controlPlane, quickControlPlane, routeUrl, auth } = clients();
  /** Binds a pooled or standby launcher to the session it was handed. */
  const bind = (a: SessionAssignment) => {
    session = { sessionId: a.sessionId, launcherToken: a.launcherToken, keepAlive: a.keepAlive };
    ({ controlPlane, quickControlPlane, routeUrl, auth } = clients());
    log = deps.log.child({ sessionId: session.sessionId, ...(config.nodeId ? { nodeId: config.nodeId } : {}) });
  };

  let stopReason: string | undefined;
  let requestStop: (reason: string) => void = () => undefined;
  const stopRequested = new Promise<string>((resolve) => {
    requestStop = resolve;
  });
  const startAbort = new AbortController();

  let resolveReady: (info: ReadyInfo) => void = () => undefined;
  let rejectReady: (err: Error) => void = () => undefined;
  const ready = new Promise<ReadyInfo>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => undefined);

  const report = async (client: ControlPlaneClient, input: Omit<SessionReport, 'sessionId' | 'nodeId'>): Promise<boolean> => {
    if (!session.sessionId) return false;
    try {
      await client.reportSession({ sessionId: session.sessionId, ...(config.nodeId ? { nodeId: config.nodeId } : {}), ...input });
      return true;
    } catch (err) {
      log.warn({ err, status: input.status }, 'report to the control plane failed');
      return false;
    }
  };

  async function putRoute(browser: Chromium): Promise<void> {
    const body: RouteRegistration = {
      sessionId: session.sessionId,
      browserPort: browser.port,
      browserWsPath: browser.wsPath,
      keepAlive: session.keepAlive,
      browserPid: browser.pid,
    };
    const res = await fetch(routeUrl, {
      method: 'PUT',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(AGENT_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`node agent refused the route: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  }

  async function deleteRoute(): Promise<void> {
    try {
      const res = await fetch(routeUrl, { method: 'DELETE', headers: auth, signal: AbortSignal.timeout(AGENT_TIMEOUT_MS) });
      if (!res.ok && res.status !== 404) log.warn({ status: res.status }, 'node agent refused to remove the route');
    } catch (err) {
      log.warn({ err }, 'removing the route failed');
    }
  }

  async function removeDir(dir: string): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }).catch((err: unknown) => log.warn({ err, dir }, 'could not remove the user-data dir'));
  }

  /** Uploads the profile and lets the control plane check and keep it; returns a note for the report. */
  async function save(dir: string, putUrl: string, maxBytes: number, exit: Exit): Promise<string> {
    if (exit.signal) {
      log.warn({ exit }, 'the browser did not close cleanly; its profile is not saved');
      return '; profile not saved: the browser did not close cleanly';
    }
    try {
      const t = performance.now();
      const { bytes } = await saveProfile(dir, putUrl, maxBytes);
      const kept = await controlPlane.reportContextSaved(session.sessionId);
      log.info({ bytes, kept, saveMs: Math.round(performance.now() - t) }, 'context profile saved');
      return kept ? '; profile saved' : '; profile refused by the control plane';
    } catch (err) {
      log.warn({ err }, 'saving the context profile failed; the previous profile is kept');
      return `; profile not saved: ${(err as Error).message}`;
    }
  }

  const describeExit = (e: Exit) => (e.signal ? `signal ${e.signal}` : `exit code ${e.code}`);

  /** The session's browser once started (killBrowser() reaches it from outside run()). */
  let browser: Chromium | undefined;

  const warmHttpClient = () => fetch(`${config.agentUrl}/healthz`, { signal: AbortSignal.timeout(AGENT_TIMEOUT_MS) }).then((r) => r.arrayBuffer()).catch(() => undefined);

  async function run(): Promise<number> {
    const label = config.pool ? 'pool' : config.standby ? 'standby' : config.sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60);
    const dir = await fs.mkdtemp(path.join(config.profileDir ?? config.workDir, `${LAUNCHER_DIR_PREFIX}${label}-`));
    // A profile in memory keeps what grows with browsing (HTTP and code caches) on disk.
    const cacheDir = config.profileDir && path.resolve(config.profileDir) !== path.resolve(config.workDir)
      ? await fs.mkdtemp(path.join(config.workDir, `${LAUNCHER_DIR_PREFIX}${label}-cache-`))
      : undefined;
    const removeDirs = () => Promise.all([removeDir(dir), ...(cacheDir ? [removeDir(cacheDir)] : [])]);
    let routed = false;

    const fail = async (message: string): Promise<number> => {
      log.error({ message }, 'session failed');
      rejectReady(new Error(message));
      if (browser?.running()) await browser.close(deps.closeTimeoutMs);
      if (routed) await deleteRoute();
      await report(controlPlane, { status: 'FAILED', message: message.slice(0, 2000) });
      await removeDirs();
      return 1;
    };

    const shutdown = async (reason: string): Promise<number> => {
      const ts = performance.now();
      log.info({ reason }, 'stopping');
      rejectReady(new Error(`stopped before ready (${reason})`));
      let saved = '';
      if (browser) {
        const exit = await browser.close(deps.closeTimeoutMs);
        log.debug({ exit, closeMs: Math.round(performance.now() - ts) }, 'browser closed');
        // Only a cleanly closed browser has flushed its cookies: save nothing else.
        if (context?.putUrl && session.sessionId) saved = await save(dir, context.putUrl, context.maxBytes, exit);
      }
      if (routed) await deleteRoute();
      await report(quickControlPlane, { status: 'STOPPED', message: `stopped: ${reason}${saved}` });
      await removeDirs();
      log.info({ stopMs: Math.round(performance.now() - ts) }, 'stopped');
      return 0;
    };

    if (stopReason) return shutdown(stopReason);
    if (config.standby) {
      // Node and this module are loaded: the session's browser starts as soon as it is assigned.
      // The first fetch of a process loads its HTTP client (~20-40 ms of CPU): pay for that now,
      // not beside the browser's start, which asks /json/version with it.
      await warmHttpClient();
      if (stopReason) return shutdown(stopReason);
      deps.onStandby?.();
      const outcome = await Promise.race([
        (deps.assignment ?? new Promise<never>(() => undefined)).then((a) => ({ kind: 'assigned' as const, a })),
        stopRequested.then((reason) => ({ kind: 'stop' as const, reason })),
      ]);
      if (outcome.kind === 'stop' || stopReason) return shutdown(stopReason ?? 'stopped on standby');
      bind(outcome.a);
      context = outcome.a.context;
      viewport = outcome.a.viewport;
    }
    if (context?.getUrl) {
      try {
        const restored = await restoreProfile(context.getUrl, dir, context.maxBytes);
        log.info({ bytes: restored.bytes }, 'context profile restored');
      } catch (err) {
        return fail(err instanceof ProfileError ? err.message : `the context could not be restored: ${String(err)}`);
      }
    }
    try {
      browser = await launchChromium({
        chromePath: config.chromePath,
        userDataDir: dir,
        viewport,
        log,
        timeoutMs: deps.launchTimeoutMs,
        ...(cacheDir ? { extraArgs: [`--disk-cache-dir=${cacheDir}`] } : {}),
        signal: startAbort.signal,
      });
    } catch (err) {
      if (stopReason) return shutdown(stopReason);
      return fail(err instanceof Error ? err.message : String(err));
    }
    if (stopReason) return shutdown(stopReason);
    if (config.pool) {
      // The first fetch of a process loads its HTTP client; pay for that now, not at hand-over.
      await warmHttpClient();
      if (stopReason) return shutdown(stopReason);
      deps.onPoolReady?.(browser.pid);
      log.info({ pid: browser.pid, port: browser.port, startMs: Math.round(performance.now() - t0) }, 'pooled browser waiting for a session');
      const outcome = await Promise.race([
        (deps.assignment ?? new Promise<never>(() => undefined)).then((a) => ({ kind: 'assigned' as const, a })),
        stopRequested.then((reason) => ({ kind: 'stop' as const, reason })),
        browser.exited.then((exit) => ({ kind: 'exit' as const, exit })),
      ]);
      if (outcome.kind === 'stop' || stopReason) return shutdown(stopReason ?? 'stopped while pooled');
      if (outcome.kind === 'exit') return fail(`pooled browser exited (${describeExit(outcome.exit)})`);
      bind(outcome.a);
      if (outcome.a.context) return fail('a pooled browser cannot take a context');
      if (outcome.a.viewport) {
        try {
          await setViewport(browser, outcome.a.viewport);
        } catch (err) {
          return fail(`could not apply the viewport to the pooled browser: ${(err as Error).message}`);
        }
      }
    }
    const tLaunched = performance.now();
    if (stopReason) return shutdown(stopReason);

    const info: BrowserInfo = { port: browser.port, wsPath: browser.wsPath, version: browser.version, pid: browser.pid, userDataDir: dir };
    let accepted: boolean;
    if (deps.reportReady) {
      // The local scheduler registers the route and records READY in its own process.
      accepted = await deps.reportReady(session.sessionId, info).catch((err: unknown) => {
        log.warn({ err }, 'the scheduler did not take the READY');
        return false;
      });
      routed = accepted;
    } else {
      try {
        await putRoute(browser);
        routed = true;
      } catch (err) {
        return fail(`could not register the route with the node agent: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (stopReason) return shutdown(stopReason);
      accepted = await report(controlPlane, { status: 'READY', browser: info });
    }
    if (!accepted) {
      if (stopReason) return shutdown(stopReason);
      return fail('the control plane did not accept the READY report');
    }
    const readyMs = Math.round(performance.now() - t0);
    log.debug({ launchMs: Math.round(tLaunched - t0), reportMs: Math.round(performance.now() - tLaunched), readyMs }, 'launch timings');
    log.info({ pid: browser.pid, port: browser.port, readyMs }, 'session ready');
    resolveReady({ pid: browser.pid, port: browser.port, wsPath: browser.wsPath, version: browser.version, userDataDir: dir, readyMs });

    const outcome = await Promise.race([
      stopRequested.then((reason) => ({ kind: 'stop' as const, reason })),
      browser.exited.then((exit) => ({ kind: 'exit' as const, exit })),
    ]);
    // A stop that was asked for wins, even if the browser went down at the same moment (Ctrl-C
    // reaches the whole process group).
    if (stopReason) return shutdown(stopReason);
    if (outcome.kind === 'exit') return fail(`browser exited unexpectedly (${describeExit(outcome.exit)})`);
    return shutdown(outcome.reason);
  }

  const done = run().catch((err: unknown) => {
    log.error({ err }, 'launcher crashed');
    rejectReady(err instanceof Error ? err : new Error(String(err)));
    return 1;
  });

  return {
    ready,
    done,
    stop(reason: string) {
      if (!stopReason) {
        stopReason = reason;
        startAbort.abort();
        requestStop(reason);
      }
      return done;
    },
    killBrowser() {
      if (browser?.running()) browser.kill();
    },
  };
}
