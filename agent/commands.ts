// Carries out the control plane's commands on this node. `release`: the session ended, so its
// route goes now (clients are cut off at once) and, should its browser still be alive after
// the launcher's stop window, it is killed. `drain`: noted; placement already skips the node.
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { NodeCommand } from '../schema/node.ts';
import type { RouteRegistry } from './routes.ts';

export interface CommandHandlerOptions {
  routes: RouteRegistry;
  log: Logger;
  /** How long the launcher gets to close its browser itself (Nomad's kill_timeout is 30 s). */
  releaseGraceMs?: number;
}

export interface CommandHandler {
  apply(command: NodeCommand): void;
  draining(): boolean;
  stop(): void;
}

/** Only a Chromium whose command line still names its debugging port is ours to kill. */
function isBrowser(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--remote-debugging-port');
  } catch {
    return false;
  }
}

export function createCommandHandler(opts: CommandHandlerOptions): CommandHandler {
  const timers = new Set<NodeJS.Timeout>();
  let draining = false;
  return {
    apply(command) {
      if (command.command === 'drain') {
        if (!draining) opts.log.info('node draining: no new sessions will be placed here; running ones finish');
        draining = true;
        return;
      }
      const route = opts.routes.get(command.sessionId);
      if (!route) return;
      opts.routes.remove(command.sessionId);
      opts.log.info({ sessionId: command.sessionId }, 'session released by the control plane: route removed');
      const pid = route.browserPid;
      if (!pid) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!isBrowser(pid)) return;
        opts.log.warn({ sessionId: command.sessionId, pid }, 'the released session\'s browser outlived its launcher\'s stop: killing it');
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }, opts.releaseGraceMs ?? 40_000);
      timer.unref();
      timers.add(timer);
    },
    draining: () => draining,
    stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
