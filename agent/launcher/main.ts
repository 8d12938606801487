// Entry of the per-session launcher process: `node --import tsx agent/launcher/main.ts`.
// A pooled launcher (CARAVAN_POOL=true) gets its session as an IPC message from its scheduler.
import { pino } from 'pino';
import { SessionAssignment } from '../../schema/agent.ts';
import { loadLauncherConfig, type LauncherConfig } from '../config.ts';
import { runLauncher } from './launcher.ts';

let config: LauncherConfig;
try {
  config = loadLauncherConfig();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}

const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'launcher' } });

const assignment = config.pool
  ? new Promise<SessionAssignment>((resolve) => {
      process.on('message', (msg) => {
        const parsed = SessionAssignment.safeParse(msg);
        if (parsed.success) resolve(parsed.data);
        else log.warn({ issues: parsed.error.issues.length }, 'ignored a malformed assignment');
      });
    })
  : undefined;

const handle = runLauncher(config, {
  log,
  ...(assignment ? { assignment, onPoolReady: (pid: number) => process.send?.({ type: 'pool-ready', pid }) } : {}),
});

process.on('SIGTERM', () => void handle.stop('SIGTERM'));
process.on('SIGINT', () => void handle.stop('SIGINT'));
// With an IPC channel, its loss means the scheduler's process is gone.
process.on('disconnect', () => void handle.stop('scheduler disconnected'));
if (config.watchStdin) {
  // The parent holds our stdin open; when it ends, the parent is gone.
  process.stdin.on('end', () => void handle.stop('stdin closed'));
  process.stdin.on('error', () => void handle.stop('stdin error'));
  process.stdin.resume();
}

const code = await handle.done;
log.flush();
if (process.connected) process.disconnect();
process.exit(code);
