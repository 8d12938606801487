// The local scheduler (embedded default): each session's launcher is a child process of the
// control plane, in its own process group so that nothing of it outlives it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Unavailable } from '../errors.ts';
import type { LaunchSpec, Placement, Scheduler } from './types.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAUNCHER = path.join(ROOT, 'agent/launcher/main.ts');

export interface LocalSchedulerOptions {
  nodeId: string;
  capacity: number;
  chromePath: string;
  workDir: string;
  /** The in-process node agent's loopback control URL. */
  agentUrl: () => string;
  log: Logger;
  logLevel?: string;
  /** PATH, HOME and the like, passed on to launchers. */
  baseEnv: Record<string, string>;
  /** Called when a launcher exits, for whatever reason. */
  onExit(sessionId: string, info: { code: number | null; signal: NodeJS.Signals | null; stopping: boolean }): void;
  /** Grace between SIGTERM and SIGKILL on stop (the browser closes and the profile is saved). */
  stopGraceMs?: number;
}

interface Task {
  sessionId: string;
  child: ChildProcess;
  stopping: boolean;
  exited: Promise<void>;
}

const killGroup = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
};

export function localScheduler(opts: LocalSchedulerOptions): Scheduler & { running(): number } {
  const tasks = new Map<string, Task>();
  const grace = opts.stopGraceMs ?? 10_000;

  return {
    running: () => tasks.size,
    async start(spec: LaunchSpec): Promise<Placement> {
      if (tasks.size >= opts.capacity) {
        throw new Unavailable(`this node is at its capacity of ${opts.capacity} browsers; retry when a session ends, or raise NODE_CAPACITY`);
      }
      const child = spawn(process.execPath, ['--import', 'tsx', LAUNCHER], {
        cwd: ROOT,
        detached: true,
        stdio: ['pipe', 'inherit', 'inherit'],
        env: {
          ...opts.baseEnv,
          LOG_LEVEL: opts.logLevel ?? 'info',
          CARAVAN_SESSION_ID: spec.sessionId,
          CARAVAN_LAUNCHER_TOKEN: spec.launcherToken,
          CARAVAN_CONTROL_URL: spec.controlUrl,
          CARAVAN_AGENT_URL: opts.agentUrl(),
          CARAVAN_NODE_ID: opts.nodeId,
          CHROME_PATH: opts.chromePath,
          CARAVAN_KEEP_ALIVE: String(spec.keepAlive),
          CARAVAN_WATCH_STDIN: 'true',
          CARAVAN_WORK_DIR: opts.workDir,
          ...(spec.viewport ? { CARAVAN_VIEWPORT: `${spec.viewport.width}x${spec.viewport.height}` } : {}),
          ...(spec.context?.getUrl ? { CARAVAN_CONTEXT_GET_URL: spec.context.getUrl } : {}),
          ...(spec.context?.putUrl ? { CARAVAN_CONTEXT_PUT_URL: spec.context.putUrl } : {}),
          ...(spec.context ? { CARAVAN_CONTEXT_MAX_BYTES: String(spec.context.maxBytes) } : {}),
        },
      });
      const taskRef = `local:${spec.sessionId}`;
      const task: Task = {
        sessionId: spec.sessionId,
        child,
        stopping: false,
        exited: new Promise((resolve) => {
          child.once('exit', (code, signal) => {
            // Whatever the launcher left behind (a browser, if it was killed) goes with it.
            killGroup(child.pid, 'SIGKILL');
            tasks.delete(taskRef);
            opts.onExit(spec.sessionId, { code, signal, stopping: task.stopping });
            resolve();
          });
        }),
      };
      child.stdin?.on('error', () => undefined);
      child.once('error', (err) => opts.log.error({ err, sessionId: spec.sessionId }, 'launcher could not start'));
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
      await Promise.all([...tasks.keys()].map((ref) => this.stop(ref)));
    },
  };
}
