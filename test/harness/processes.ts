// Finds the processes that belong to a session (its user-data dir carries the session id).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export function browserPids(sessionId: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `user-data-dir=\\S*${sessionId}`], { encoding: 'utf8' })
      .trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The launcher of a session: the parent of its browser's main process. */
export function launcherPid(sessionId: string): number | undefined {
  for (const pid of browserPids(sessionId)) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
      const cmd = fs.readFileSync(`/proc/${ppid}/cmdline`, 'utf8');
      if (cmd.includes('launcher')) return ppid;
    } catch {
      // the process went away meanwhile
    }
  }
  return undefined;
}
