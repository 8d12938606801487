// Entry of the per-session launcher process: `node --import tsx agent/launcher/main.ts`.
import { pino } from 'pino';
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
const handle = runLauncher(config, { log });

process.on('SIGTERM', () => void handle.stop('SIGTERM'));
process.on('SIGINT', () => void handle.stop('SIGINT'));
if (config.watchStdin) {
  // The parent holds our stdin open; when it ends, the parent is gone.
  process.stdin.on('end', () => void handle.stop('stdin closed'));
  process.stdin.on('error', () => void handle.stop('stdin error'));
  process.stdin.resume();
}

const code = await handle.done;
log.flush();
process.exit(code);
