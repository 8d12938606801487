// The local scheduler (embedded default): each session's launcher is a child process of the
// control plane, in its own process group so that nothing of it outlives it. Launchers talk to
// it over their IPC channel: a warm pool of started browsers is handed to new sessions that have
// no context (each serves one session), spare launchers (Node loaded, no browser yet) take every
// other session, and a launcher's READY comes back over IPC so that the route and the state
// change are recorded in this process without an HTTP round trip.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { LocalReady, PoolReady, StandbyReady, type BrowserInfo, type LocalReadyAck, type RouteRegistration, type SessionAssignment } from '../../schema/agent.ts';
import { Unavailable } from '../errors.ts';
import type { LaunchSpec, Placement, Scheduler } from './types.ts';

export interface LocalSchedulerOptions {
  nodeId: string;
  capacity: number;
  /** Started browsers kept waiting for sessions (0 turns the pool off). */
  poolSize: number;
  /** Launcher processes kept loaded without a browser, for sessions the pool cannot serve. */
  spareLaunchers: number;
  chromePath: string;
  workDir: string;
  /** Parent of the user-data dirs when not workDir (memory); caches stay in workDir. */
  profileDir?: string;
  /** How to start a launcher: the bundled module (fast) or the TypeScript source. */
  launcher: { entry: string; nodeArgs: string[] };
  controlUrl: () => string;
  /** The in-process node agent's loopback control URL. */
  agentUrl: () => string;
  /** A launcher's browser is up: register its route and record READY; false when refused. */
  onReady(sessionId: string, route: RouteRegistration, browser: BrowserInfo): Promise<boolean>;
  log: Logger;
  logLevel?: string;
  /** PATH, HOME and the like, passed on to launchers. */
  baseEnv: Record<string, string>;
  /** Called when a session's launcher exits, for whatever reason. */
  onExit(sessionId: string, info: { code: number | null; signal: NodeJS.Signals | null; stopping: boolean }): void;
  /** Grace between SIGTERM and SIGKILL on stop (the browser closes and the profile is saved). */
  stopGraceMs?: number;
}

type Kind = 'pooled' | 'spare';

interface Task {
  kind: Kind;
  sessionId?: string;
  keepAlive: boolean;
  child: ChildProcess;
  stopping: boolean;
  /** Pooled: its browser is up and waiting. Spare: it listens for its assignment. */
  waiting: boolean;
  /** Resolves once `waiting` turns true (never, if the launcher exits first). */
  listening: Promise<void>;
  exited: Promise<void>;
  /** What to do when the launcher exits; replaced when the launcher is handed out. */
  onExit: (task: Task, code: number | null, signal: NodeJS.Signals | null) => void;
  /** A handed-out spare: its replacement is loaded 1 s after its browser is up. */
  replaceAtReady: boolean;
}

const REFILL_DELAY_MS = 1_000;
/** A handed-out spare is replaced REFILL_DELAY_MS after its session's READY, or this long after the hand-over at the latest. */
const SPARE_REFILL_FALLBACK_MS = 5_000;
/** How long a spare may take to load before a session handed to it fails. */
const SPARE_LISTEN_TIMEOUT_MS = 15_000;

const killGroup = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
};

export interface LocalScheduler extends Scheduler {
  running(): number;
  pooled(): { warm: number; starting: number; spare: number };
  /** Starts filling the pool and the spares (once the agent and the HTTP listener are up). */
  warmUp(): void;
}

export function localScheduler(opts: LocalSchedulerOptions): LocalScheduler {
  const tasks = new Map<string, Task>();
  const pool: Task[] = [];
  const spares: Task[] = [];
  const grace = opts.stopGraceMs ?? 10_000;
  let closed = false;
  let idleFailures = 0;
  /** Cold starts between their capacity check and their hand-out (which may await a launcher). */
  let reserved = 0;
  const occupied = () => tasks.size + reserved;

  const baseEnv = () => ({
    ...opts.baseEnv,
    LOG_LEVEL: opts.logLevel ?? 'info',
    CARAVAN_CONTROL_URL: opts.controlUrl(),
    CARAVAN_AGENT_URL: opts.agentUrl(),
    CARAVAN_NODE_ID: opts.nodeId,
    CHROME_PATH: opts.chromePath,
    CARAVAN_WATCH_STDIN: 'true',
    CARAVAN_WORK_DIR: opts.workDir,
    ...(opts.profileDir ? { CARAVAN_PROFILE_DIR: opts.profileDir } : {}),
    CARAVAN_IPC_READY: 'true',
  });

  async function answerReady(task: Task, msg: LocalReady): Promise<void> {
    let ack: LocalReadyAck;
    if (msg.sessionId !== task.sessionId) {
      ack = { type: 'ready-ack', accepted: false, message: `this launcher serves ${task.sessionId ?? 'no session'}, not ${msg.sessionId}` };
    } else {
      const route: RouteRegistration = {
        sessionId: msg.sessionId, browserPort: msg.browser.port, browserWsPath: msg.browser.wsPath, keepAlive: task.keepAlive,
        ...(msg.browser.pid ? { browserPid: msg.browser.pid } : {}),
      };
      try {
        ack = { type: 'ready-ack', accepted: await opts.onReady(msg.sessionId, route, msg.browser) };
      } catch (err) {
        opts.log.warn({ err, sessionId: msg.sessionId }, 'recording READY failed');
        ack = { type: 'ready-ack', accepted: false, message: err instanceof Error ? err.message : String(err) };
      }
    }
    if (task.child.connected) task.child.send(ack);
    if (task.replaceAtReady) {
      task.replaceAtReady = false;
      setTimeout(refill, REFILL_DELAY_MS).unref();
    }
  }

  /** An idle launcher (pooled or spare): it waits for a session; `signal` says it got there. */
  function spawnIdle(kind: Kind): Task {
    const startedAt = Date.now();
    const list = kind === 'pooled' ? pool : spares;
    let markListening: () => void = () => undefined;
    const child = spawn(process.execPath, [...opts.launcher.nodeArgs, opts.launcher.entry], {
      detached: true,
      stdio: ['pipe', 'inherit', 'inherit', 'ipc'],
      env: { ...baseEnv(), ...(kind === 'pooled' ? { CARAVAN_POOL: 'true' } : { CARAVAN_STANDBY: 'true' }) },
    });
    const task: Task = {
      kind,
      keepAlive: false,
      child,
      stopping: false,
      waiting: false,
      listening: new Promise((resolve) => {
        markListening = resolve;
      }),
      replaceAtReady: false,
      onExit: (t, code, signal) => {
        const i = list.indexOf(t);
        if (i >= 0) list.splice(i, 1);
        if (!t.stopping && !closed) {
          opts.log.warn({ code, signal, kind }, `a ${kind} launcher exited before it was used`);
          // A launcher or browser that cannot start should not be restarted in a tight loop.
          idleFailures = Date.now() - startedAt < 5_000 ? idleFailures + 1 : 0;
          setTimeout(refill, Math.min(30_000, 500 * 2 ** idleFailures)).unref();
        }
      },
      exited: new Promise((resolve) => {
        child.once('exit', (code, signal) => {
          // Whatever the launcher left behind (a browser, if it was killed) goes with it.
          killGroup(child.pid, 'SIGKILL');
          task.onExit(task, code, signal);
          resolve();
        });
      }),
    };
    child.stdin?.on('error', () => undefined);
    child.on('error', (err) => opts.log.error({ err }, 'launcher could not start'));
    child.on('message', (msg) => {
      const ready = LocalReady.safeParse(msg);
      if (ready.success) {
        void answerReady(task, ready.data);
        return;
      }
      if ((kind === 'pooled' ? PoolReady : StandbyReady).safeParse(msg).success) {
        task.waiting = true;
        if (kind === 'pooled') idleFailures = 0;
        markListening();
      }
    });
    list.push(task);
    return task;
  }

  function sessionExit(taskRef: string, sessionId: string) {
    return (task: Task, code: number | null, signal: NodeJS.Signals | null) => {
      tasks.delete(taskRef);
      opts.onExit(sessionId, { code, signal, stopping: task.stopping });
      refill();
    };
  }

  function refill() {
    if (closed) return;
    while (pool.length < opts.poolSize && occupied() + pool.length < opts.capacity) spawnIdle('pooled');
    while (spares.length < opts.spareLaunchers) spawnIdle('spare');
  }

  /** The first waiting launcher of `list`, else one still loading (further along than a new one). */
  function take(list: Task[]): Task | undefined {
    let i = list.findIndex((t) => t.waiting && t.child.connected);
    if (i < 0) i = list.findIndex((t) => t.child.connected);
    if (i < 0) return undefined;
    return list.splice(i, 1)[0];
  }

  /** SIGTERM (the launcher closes its browser and saves its profile), SIGKILL of its group after the grace. */
  async function stopTask(task: Task): Promise<void> {
    task.stopping = true;
    task.child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(task.child.pid, 'SIGKILL'), grace);
    await task.exited;
    clearTimeout(timer);
  }

  function handOut(task: Task, taskRef: string, spec: LaunchSpec): void {
    const assignment: SessionAssignment = {
      type: 'assign', sessionId: spec.sessionId, launcherToken: spec.launcherToken, keepAlive: spec.keepAlive,
      ...(spec.viewport ? { viewport: spec.viewport } : {}),
      ...(spec.context ? { context: spec.context } : {}),
    };
    task.sessionId = spec.sessionId;
    task.keepAlive = spec.keepAlive;
    task.onExit = sessionExit(taskRef, spec.sessionId);
    tasks.set(taskRef, task);
    task.child.send(assignment);
    // Starting a browser takes both cores of a small node for a moment: let the new session get
    // going first (its create's answer, its client's connect). A pooled browser is replaced 1 s
    // after the hand-over; a spare (Node only) 1 s after its session's browser is up (or after
    // SPARE_REFILL_FALLBACK_MS, or when its launcher is gone), not beside that browser's start.
    if (task.kind === 'pooled') {
      setTimeout(refill, REFILL_DELAY_MS).unref();
    } else {
      task.replaceAtReady = true;
      setTimeout(refill, SPARE_REFILL_FALLBACK_MS).unref();
    }
  }

  return {
    running: () => tasks.size,
    pooled: () => ({ warm: pool.filter((t) => t.waiting).length, starting: pool.filter((t) => !t.waiting).length, spare: spares.length }),

    async start(spec: LaunchSpec): Promise<Placement> {
      const taskRef = `local:${spec.sessionId}`;
      const warm = spec.context ? undefined : take(pool);
      if (warm) {
        handOut(warm, taskRef, spec);
        return { taskRef, nodeId: opts.nodeId };
      }
      if (occupied() >= opts.capacity) {
        throw new Unavailable(`this node is at its capacity of ${opts.capacity} browsers; retry when a session ends, or raise NODE_CAPACITY`);
      }
      reserved += 1;
      try {
        // Make room: a cold start must not push the node past capacity with the pool counted, not
        // even for the moment a pooled browser takes to close.
        if (occupied() + pool.length > opts.capacity) {
          const evicted = pool.pop();
          if (evicted) await stopTask(evicted);
        }
        const task = take(spares) ?? (() => {
          const fresh = spawnIdle('spare');
          spares.splice(spares.indexOf(fresh), 1);
          return fresh;
        })();
        // Until it is handed out, a launcher that dies is a spare that died: the session fails
        // through the scheduler's error, not through onExit.
        let timer: NodeJS.Timeout | undefined;
        const loaded = await Promise.race([
          task.listening.then(() => true),
          task.exited.then(() => false),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), SPARE_LISTEN_TIMEOUT_MS);
          }),
        ]);
        clearTimeout(timer);
        if (!loaded || !task.child.connected) {
          task.stopping = true;
          killGroup(task.child.pid, 'SIGKILL');
          throw new Unavailable('a browser launcher could not be started on this node; see the server log, then retry');
        }
        handOut(task, taskRef, spec);
        return { taskRef, nodeId: opts.nodeId };
      } finally {
        reserved -= 1;
      }
    },

    async stop(taskRef: string) {
      const task = tasks.get(taskRef);
      if (!task) return;
      await stopTask(task);
    },

    async close() {
      closed = true;
      const idle = [...pool, ...spares];
      for (const t of idle) {
        t.stopping = true;
        t.child.kill('SIGTERM');
      }
      await Promise.all([...[...tasks.keys()].map((ref) => this.stop(ref)), ...idle.map((t) => t.exited)]);
    },

    warmUp: refill,
  };
}
