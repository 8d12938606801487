// Finds the processes that belong to a session: its browser runs with the user-data dir the
// launcher reported (stored in the session's debug facts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Db } from '../../server/db/client.ts';

/** Pids of every process whose command line mentions `text` (a user-data dir, a data dir). */
export function processesMentioning(text: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', '--', text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')], { encoding: 'utf8' })
      .trim().split('\n').filter(Boolean).map(Number).filter((pid) => pid !== process.pid);
  } catch {
    return [];
  }
}

export async function browserDir(db: Db, sessionId: string): Promise<string> {
  const row = await db.session.findUnique({ where: { id: sessionId }, select: { debug: true } });
  const dir = (row?.debug as { userDataDir?: string } | null)?.userDataDir;
  if (!dir) throw new Error(`session ${sessionId} has no browser dir recorded`);
  return dir;
}

/** The session's browser processes (main process first). */
export async function browserPids(db: Db, sessionId: string): Promise<number[]> {
  return processesMentioning(`--user-data-dir=${await browserDir(db, sessionId)}`).sort((a, b) => a - b);
}

/** The launcher of a session: the parent of its browser's main process. */
export async function launcherPid(db: Db, sessionId: string): Promise<number | undefined> {
  for (const pid of await browserPids(db, sessionId)) {
    try {
      const ppid = Number(/PPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (fs.readFileSync(`/proc/${ppid}/cmdline`, 'utf8').includes('launcher')) return ppid;
    } catch {
      // the process went away meanwhile
    }
  }
  return undefined;
}
