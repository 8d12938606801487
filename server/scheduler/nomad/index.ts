// SCHEDULER=nomad, composed: the Nomad client from config, the browser-session job (from its
// JSON file, adjusted to config), the scheduler following allocations, and the node reaper.
// Node agents are separate processes (`caravan agent`, a Nomad system job); nothing runs in here.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { releaseContextLock } from '../../contexts/attach.ts';
import type { Deps } from '../../deps.ts';
import { startNodeReaper } from '../../nodes/reaper.ts';
import { endSession } from '../../sessions/end.ts';
import { nomadClient } from './client.ts';
import { baseJob, loadJobFile, parseCommand } from './job.ts';
import { nomadScheduler, type NomadScheduler } from './scheduler.ts';

export async function startNomadScheduler(
  base: Omit<Deps, 'scheduler'>,
  config: Config,
  log: Logger,
  cleanups: Array<() => unknown>,
  getDeps: () => Deps | undefined,
): Promise<NomadScheduler> {
  const client = nomadClient({
    addr: config.NOMAD_ADDR,
    namespace: config.NOMAD_NAMESPACE,
    ...(config.NOMAD_TOKEN ? { token: config.NOMAD_TOKEN } : {}),
    ...(config.NOMAD_REGION ? { region: config.NOMAD_REGION } : {}),
  });
  const launcherCommand = parseCommand(config.NOMAD_LAUNCHER_COMMAND);
  const job = baseJob(await loadJobFile(config.NOMAD_JOB_FILE), {
    id: config.NOMAD_JOB_ID,
    namespace: config.NOMAD_NAMESPACE,
    chromePath: config.CHROME_PATH,
    ...(path.isAbsolute(config.BROWSER_PROFILE_DIR) ? { profileDir: config.BROWSER_PROFILE_DIR } : {}),
    ...(config.NOMAD_REGION ? { region: config.NOMAD_REGION } : {}),
    ...(config.NOMAD_DATACENTERS ? { datacenters: config.NOMAD_DATACENTERS.split(',').map((d) => d.trim()).filter(Boolean) } : {}),
    ...(launcherCommand ? { launcherCommand } : {}),
  });
  const slog = log.child({ scheduler: 'nomad' });
  const scheduler = nomadScheduler({
    client,
    db: base.db,
    log: slog,
    clock: base.clock,
    job,
    heartbeatTimeoutMs: config.NODE_HEARTBEAT_TIMEOUT_MS,
    ...(config.CARAVAN_CONTROL_URL ? { controlUrl: config.CARAVAN_CONTROL_URL } : {}),
    onLost: async (sessionId, reason, message) => {
      const deps = getDeps();
      if (!deps) return;
      await releaseContextLock(deps, sessionId).catch(() => undefined);
      await endSession(deps, sessionId, 'FAILED', reason, message);
    },
  });
  // Nomad may come up after the control plane: registration is retried at the first session.
  await scheduler.prepare().catch((err: unknown) => slog.warn({ err: (err as Error).message, nomad: client.addr }, 'could not register the browser-session job yet; retrying at the first session'));
  scheduler.follow();
  cleanups.push(startNodeReaper(getDeps, config.NODE_HEARTBEAT_TIMEOUT_MS, config.REAPER_INTERVAL_MS));
  slog.info({ nomad: client.addr, namespace: config.NOMAD_NAMESPACE, job: config.NOMAD_JOB_ID }, 'nomad scheduler ready');
  return scheduler;
}
