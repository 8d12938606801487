// Reads /proc: the process table, process trees, PSS from smaps_rollup, start times, and
// which Chromium processes belong to a Caravan data dir.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  state: string;
  /** Start time in clock ticks since boot. */
  startTicks: number;
  cmdline: string[];
}

let clockTicks: number | undefined;
/** USER_HZ, the unit of /proc/<pid>/stat start times (almost always 100). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function readStat(pid: number): Omit<Proc, 'cmdline'> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces or parentheses itself: split at the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const rest = text.slice(close + 2).split(' ');
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: Number(rest[1]),
    startTicks: Number(rest[19]),
  };
}

function readCmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Every live process (zombies excluded). */
export function listProcesses(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const stat = readStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') continue;
    out.push({ ...stat, cmdline: readCmdline(pid) });
  }
  return out;
}

/** The process and all its descendants, from one snapshot of the table. */
export function tree(root: number, procs: readonly Proc[]): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const queue = procs.filter((p) => p.pid === root);
  while (queue.length) {
    const p = queue.shift();
    if (!p) break;
    out.push(p);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return out;
}

/** Proportional set size of one process in KiB (smaps_rollup); 0 if it is gone or unreadable. */
export function pssKiB(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export const sumPssMiB = (procs: readonly Proc[]): number => procs.reduce((s, p) => s + pssKiB(p.pid), 0) / 1024;

/** True once the process has exited (a zombie waiting for its parent counts as gone). */
export function isGone(pid: number): boolean {
  const stat = readStat(pid);
  return !stat || stat.state === 'Z' || stat.state === 'X';
}

/** Seconds since boot, from /proc/uptime (10 ms resolution, same clock as process start times). */
export function uptimeSeconds(): number {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/** Seconds since boot at which the process started; undefined if it is gone. */
export function startSeconds(pid: number): number | undefined {
  const stat = readStat(pid);
  return stat ? stat.startTicks / ticksPerSecond() : undefined;
}

/** The `--user-data-dir` a Chromium process was started with. */
export function userDataDirOf(pid: number): string | undefined {
  const arg = readCmdline(pid).find((a) => a.startsWith('--user-data-dir='));
  return arg?.slice('--user-data-dir='.length);
}

export interface BrowserTree {
  /** The browser's user-data dir (one per browser). */
  profile: string;
  root: Proc;
  procs: Proc[];
}

/**
 * Chromium browsers whose user-data dir lies under `dir`, each with its whole process tree
 * (renderers, GPU and utility processes do not all repeat the flag, but are descendants).
 */
export function browsersUnder(dir: string, procs: readonly Proc[] = listProcesses()): BrowserTree[] {
  const prefix = `--user-data-dir=${dir.replace(/\/$/, '')}/`;
  const profileOf = (p: Proc) => p.cmdline.find((a) => a.startsWith(prefix))?.slice('--user-data-dir='.length);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const out: BrowserTree[] = [];
  for (const p of procs) {
    const profile = profileOf(p);
    if (!profile) continue;
    const parent = byPid.get(p.ppid);
    if (parent && profileOf(parent) === profile) continue; // not the root of its browser
    out.push({ profile, root: p, procs: tree(p.pid, procs) });
  }
  return out;
}

/** Browser launchers under a server (the bundled launcher module), not its other Node children. */
export function launchersOf(serverPid: number, procs: readonly Proc[] = listProcesses()): Proc[] {
  return tree(serverPid, procs).filter((p) => p.pid !== serverPid && p.comm === 'node' && p.cmdline.some((a) => a.endsWith('launcher.mjs') || a.endsWith('launcher/main.ts')));
}
