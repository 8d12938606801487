// Entry of the per-session launcher process: `node --import tsx agent/launcher/main.ts`.
// A pooled (CARAVAN_POOL=true) or standby (CARAVAN_STANDBY=true) launcher gets its session as an
// IPC message from its scheduler; with CARAVAN_IPC_READY=true its READY goes back the same way.
import { pino } from 'pino';
import { LocalReadyAck, SessionAssignment, type BrowserInfo, type LocalReady } from '../../schema/agent.ts';
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

const assignment = config.pool || config.standby
  ? new Promise<SessionAssignment>((resolve) => {
      process.on('message', (msg) => {
        if ((msg as { type?: unknown } | null)?.type !== 'assign') return;
        const parsed = SessionAssignment.safeParse(msg);
        if (parsed.success) resolve(parsed.data);
        else log.warn({ issues: parsed.error.issues.length }, 'ignored a malformed assignment');
      });
    })
  : undefined;

const READY_ACK_TIMEOUT_MS = 10_000;

/** To the scheduler, if it is still there: a closed channel is answered by the 'disconnect'
 *  handler below (a clean stop), never by an unhandled 'error' event. */
function tell(message: object): void {
  if (!process.connected || !process.send) return;
  process.send(message, (err: Error | null) => {
    if (err) log.debug({ err: err.message }, 'IPC message to the scheduler not delivered');
  });
}

/** READY over IPC: the scheduler answers with a ready-ack once it recorded (or refused) it. */
function reportReadyOverIpc(sessionId: string, browser: BrowserInfo): Promise<boolean> {
  if (!process.connected) return Promise.reject(new Error('no IPC channel to the scheduler'));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error(`the scheduler did not answer the READY within ${READY_ACK_TIMEOUT_MS} ms`));
    }, READY_ACK_TIMEOUT_MS);
    const onMessage = (msg: unknown) => {
      const ack = LocalReadyAck.safeParse(msg);
      if (!ack.success) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (!ack.data.accepted) log.warn({ message: ack.data.message }, 'the scheduler refused the READY');
      resolve(ack.data.accepted);
    };
    process.on('message', onMessage);
    const message: LocalReady = { type: 'ready', sessionId, browser };
    tell(message);
  });
}

const handle = runLauncher(config, {
  log,
  ...(assignment ? { assignment } : {}),
  ...(config.pool ? { onPoolReady: (pid: number) => tell({ type: 'pool-ready', pid }) } : {}),
  ...(config.standby ? { onStandby: () => tell({ type: 'standby' }) } : {}),
  ...(config.ipcReady ? { reportReady: reportReadyOverIpc } : {}),
});

// A launcher that dies of a bug must not leave its browser running with nobody to stop it.
process.on('uncaughtException', (err) => {
  log.fatal({ err }, 'launcher crashed; killing its browser');
  handle.killBrowser();
  log.flush();
  process.exit(1);
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
