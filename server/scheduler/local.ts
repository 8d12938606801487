// The local scheduler (embedded default): each session's launcher is a child process of the
// control plane, in its own process group so that nothing of it outlives it. A warm pool of
// started browsers is handed to new sessions that have no context; each serves one session.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { PoolReady, type SessionAssignment } from '../../schema/agent.ts';
import { Unavailable } from '../errors.ts';
import type { LaunchSpec, Placement, Scheduler } from './types.ts';

export interface LocalSchedulerOptions {
  nodeId: string;
  capacity: number;
  /** Started browsers kept waiting for sessions (0 turns the pool off). */
  poolSize: number;
  chromePath: string;
  workDir: string;
  /** How to start a launcher: the bundled module (fast) or the TypeScript source. */
  launcher: { entry: string; nodeArgs: string[] };
  controlUrl: () => string;
  /** The in-process node agent's loopback control URL. */
  agentUrl: () => string;
  log: Logger;
  logLevel?: string;
  /** PATH, HOME and the like, passed on to launchers. */
  baseEnv: Record<string, string>;
  /** Called when a session's launcher exits, for whatever reason. */
  onExit(sessionId: string, info: { code: number | null; signal: NodeJS.Signals | null; stopping: boolean }): void;
  /** Grace between SIGTERM and SIGKILL on stop (the browser closes and the profile is saved). */
  stopGraceMs?: number;
}

interface Task {
  sessionId?: string;
  child: ChildProcess;
  stopping: boolean;
  /** Pooled: its browser is up and waiting. */
  warm: boolean;
  exited: Promise<void>;
  /** What to do when the launcher exits; replaced when a pooled one is handed out. */
  onExit: (task: Task, code: number | null, signal: NodeJS.Signals | null) => void;
}

const REFILL_DELAY_MS = 1_000;

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
  pooled(): { warm: number; starting: number };
  /** Starts filling the pool (once the agent and the HTTP listener are up). */
  warmUp(): void;
}

export function localScheduler(opts: LocalSchedulerOptions): LocalScheduler {
  const tasks = new Map<string, Task>();
  const pool: Task[] = [];
  const grace = opts.stopGraceMs ?? 10_000;
  let closed = false;
  let poolFailures = 0;

  const baseEnv = () => ({
    ...opts.baseEnv,
    LOG_LEVEL: opts.logLevel ?? 'info',
    CARAVAN_CONTROL_URL: opts.controlUrl(),
    CARAVAN_AGENT_URL: opts.agentUrl(),
    CARAVAN_NODE_ID: opts.nodeId,
    CHROME_PATH: opts.chromePath,
    CARAVAN_WATCH_STDIN: 'true',
    CARAVAN_WORK_DIR: opts.workDir,
  });

  function spawnLauncher(env: Record<string, string>, onExit: (task: Task, code: number | null, signal: NodeJS.Signals | null) => void): Task {
    const child = spawn(process.execPath, [...opts.launcher.nodeArgs, opts.launcher.entry], {
      detached: true,
      stdio: ['pipe', 'inherit', 'inherit', 'ipc'],
      env,
    });
    const task: Task = {
      child,
      stopping: false,
      warm: false,
      onExit,
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
    while (pool.length < opts.poolSize && tasks.size + pool.length < opts.capacity) spawnPooled();
  }

  function spawnPooled() {
    const startedAt = Date.now();
    const task = spawnLauncher({ ...baseEnv(), CARAVAN_POOL: 'true' }, (t, code, signal) => {
      const i = pool.indexOf(t);
      if (i >= 0) pool.splice(i, 1);
      if (!t.stopping && !closed) {
        opts.log.warn({ code, signal }, 'a pooled browser exited before it was used');
        // A browser that cannot start should not be restarted in a tight loop.
        poolFailures = Date.now() - startedAt < 5_000 ? poolFailures + 1 : 0;
        setTimeout(refill, Math.min(30_000, 500 * 2 ** poolFailures)).unref();
      }
    });
    task.child.on('message', (msg) => {
      if (PoolReady.safeParse(msg).success) {
        task.warm = true;
        poolFailures = 0;
      }
    });
    pool.push(task);
  }

  /** A pooled launcher for a new session: a warm one, else one still starting (it is further
   *  along than a cold start would be). */
  function takePooled(): Task | undefined {
    let i = pool.findIndex((t) => t.warm && t.child.connected);
    if (i < 0) i = pool.findIndex((t) => t.child.connected);
    if (i < 0) return undefined;
    return pool.splice(i, 1)[0];
  }

  return {
    running: () => tasks.size,
    pooled: () => ({ warm: pool.filter((t) => t.warm).length, starting: pool.filter((t) => !t.warm).length }),

    async start(spec: LaunchSpec): Promise<Placement> {
      const taskRef = `local:${spec.sessionId}`;
      const warm = spec.context ? undefined : takePooled();
      if (warm) {
        const assignment: SessionAssignment = {
          type: 'assign', sessionId: spec.sessionId, launcherToken: spec.launcherToken, keepAlive: spec.keepAlive,
          ...(spec.viewport ? { viewport: spec.viewport } : {}),
        };
        warm.sessionId = spec.sessionId;
        warm.onExit = sessionExit(taskRef, spec.sessionId);
        tasks.set(taskRef, warm);
        warm.child.send(assignment);
        // Starting a browser takes both cores for a moment: let the new session get going first.
        setTimeout(refill, REFILL_DELAY_MS).unref();
        return { taskRef, nodeId: opts.nodeId };
      }
      if (tasks.size >= opts.capacity) {
        throw new Unavailable(`this node is at its capacity of ${opts.capacity} browsers; retry when a session ends, or raise NODE_CAPACITY`);
      }
      // Make room: a cold start must not push the node past capacity with the pool counted.
      if (tasks.size + pool.length >= opts.capacity) {
        const spare = pool.pop();
        if (spare) {
          spare.stopping = true;
          spare.child.kill('SIGTERM');
        }
      }
      const task = spawnLauncher(
        {
          ...baseEnv(),
          CARAVAN_SESSION_ID: spec.sessionId,
          CARAVAN_LAUNCHER_TOKEN: spec.launcherToken,
          CARAVAN_KEEP_ALIVE: String(spec.keepAlive),
          ...(spec.viewport ? { CARAVAN_VIEWPORT: `${spec.viewport.width}x${spec.viewport.height}` } : {}),
          ...(spec.context?.getUrl ? { CARAVAN_CONTEXT_GET_URL: spec.context.getUrl } : {}),
          ...(spec.context?.putUrl ? { CARAVAN_CONTEXT_PUT_URL: spec.context.putUrl } : {}),
          ...(spec.context ? { CARAVAN_CONTEXT_MAX_BYTES: String(spec.context.maxBytes) } : {}),
        },
        sessionExit(taskRef, spec.sessionId),
      );
      task.sessionId = spec.sessionId;
      tasks.set(taskRef, task);
      return { taskRef, nodeId: opts.nodeId };
    },

    async stop(taskRef: string) {
      const task = tasks.get(taskRef);
      if (!task) return;
      task.stopping = true;
      task.child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(task.child.pid, 'SIGKILL'), grace);
      await task.exited;
      clearTimeout(timer);
    },

    async close() {
      closed = true;
      for (const t of pool) {
        t.stopping = true;
        t.child.kill('SIGTERM');
      }
      await Promise.all([...[...tasks.keys()].map((ref) => this.stop(ref)), ...pool.map((t) => t.exited)]);
    },

    warmUp: refill,
  };
}
