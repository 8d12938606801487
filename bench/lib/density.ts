// Memory density: N idle keepAlive sessions at once; PSS of each browser's process tree, of
// each launcher, of the control plane (which hosts the agent) and of the embedded PostgreSQL.
import fs from 'node:fs/promises';
import path from 'node:path';
import { progress } from './log.ts';
import { listProcesses, pssKiB, sumPssMiB, tree, type Proc } from './procfs.ts';
import { createSession, releaseSession, serverBrowsers, until, type BenchServer } from './server.ts';
import { median, round } from './stats.ts';

export interface DensityResult {
  sessions: number;
  browsersFound: number;
  createSeconds: number;
  /** PSS of one session's browser tree, MiB. */
  browserMiB: { median: number; min: number; max: number; total: number };
  processesPerBrowser: number;
  /** PSS of one session's launcher (a node process that owns the browser), MiB. */
  launcherMiB: { median: number; total: number };
  /** Disk (or, with profiles in memory, RAM) a session's user-data dir takes, MiB (allocated blocks). */
  profileMiB: { median: number; inMemory: boolean };
  /** Browser tree + launcher (+ the profile when it is in memory), median, MiB. */
  perSessionMiB: number;
  controlPlaneMiB: { idle: number; loaded: number };
  postgresMiB: number;
}

/** What a directory tree occupies (st_blocks, as du counts it): on tmpfs, that much RAM. */
async function allocatedBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    const st = await fs.lstat(path.join(e.parentPath, e.name)).catch(() => undefined);
    total += (st?.blocks ?? 0) * 512;
  }
  return total;
}

const isPostgres = (p: Proc) => p.comm === 'postgres' || p.cmdline[0]?.endsWith('/postgres') === true;
const mib = (kib: number) => kib / 1024;

/** Idle memory of the control plane process alone. */
export const controlPlaneMiB = (server: BenchServer) => mib(pssKiB(server.pid));

/** `idleMiB`: the control plane's PSS measured earlier with no session (default: now). */
export async function runDensity(server: BenchServer, sessions = 20, idleMiB = controlPlaneMiB(server)): Promise<DensityResult> {
  const idle = idleMiB;
  const ids: string[] = [];
  const t0 = performance.now();
  try {
    // A few creates at a time: what a busy client would do, and quicker than one by one.
    let next = 0;
    const worker = async () => {
      while (next < sessions) {
        next++;
        const s = await createSession(server, true);
        ids.push(s.id);
        progress(`density ${ids.length}/${sessions} sessions running`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    const createSeconds = (performance.now() - t0) / 1000;
    await until(() => serverBrowsers(server).length >= sessions, 30_000, 200);
    // Let start-up work (renderer spin-up, first GC) settle before reading idle memory.
    await new Promise((r) => setTimeout(r, 5_000));

    const procs = listProcesses();
    const browsers = serverBrowsers(server);
    const browserMiB = browsers.map((b) => sumPssMiB(b.procs));
    const serverTree = tree(server.pid, procs);
    // A launcher is whatever process owns a browser, short of the control plane itself.
    const launcherPids = new Set(browsers.map((b) => b.root.ppid).filter((pid) => pid !== server.pid && serverTree.some((p) => p.pid === pid)));
    const launchers = [...launcherPids].map((pid) => mib(pssKiB(pid)));
    const postgres = serverTree.filter(isPostgres);
    const profiles = await Promise.all(browsers.map((b) => allocatedBytes(b.profile)));
    const profileMiB = round(median(profiles) / 2 ** 20);
    const result: DensityResult = {
      sessions,
      browsersFound: browsers.length,
      createSeconds: round(createSeconds),
      browserMiB: {
        median: round(median(browserMiB)),
        min: round(Math.min(...browserMiB)),
        max: round(Math.max(...browserMiB)),
        total: round(browserMiB.reduce((a, b) => a + b, 0)),
      },
      processesPerBrowser: round(median(browsers.map((b) => b.procs.length))),
      launcherMiB: { median: round(median(launchers)), total: round(launchers.reduce((a, b) => a + b, 0)) },
      profileMiB: { median: profileMiB, inMemory: server.profilesInMemory },
      perSessionMiB: round(median(browserMiB) + median(launchers) + (server.profilesInMemory ? profileMiB : 0)),
      controlPlaneMiB: { idle: round(idle), loaded: round(controlPlaneMiB(server)) },
      postgresMiB: round(sumPssMiB(postgres)),
    };
    progress(`density: ${browsers.length} browsers, ${result.browserMiB.median} MiB PSS each (median), launcher ${result.launcherMiB.median} MiB, control plane ${result.controlPlaneMiB.loaded} MiB`);
    return result;
  } finally {
    await Promise.all(ids.map((id) => releaseSession(server, id).catch(() => undefined)));
    if (!(await until(() => serverBrowsers(server).length === 0, 60_000, 100))) progress('density: browsers still running 60 s after release');
  }
}
