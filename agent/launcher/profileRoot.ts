// Where a node's browsers keep their user-data dirs. Chromium writes ~135 small files into a
// fresh profile before it answers CDP; on tmpfs it answered 50-70 ms sooner than on this
// machine's ext4 (docs/decisions.md, "Profiles in memory"). The HTTP and code caches, the only
// parts that grow with browsing, stay on disk (--disk-cache-dir, see launcher.ts).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** statfs f_type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
export const SHM_DIR = '/dev/shm';
/** auto puts profiles in memory only when the tmpfs has at least this much free. */
export const MIN_TMPFS_FREE_BYTES = 1024 ** 3;
/** Every directory a launcher makes starts with this; a node's start sweeps what crashed launchers left. */
export const LAUNCHER_DIR_PREFIX = 'caravan-';

export type ProfileSetting = 'auto' | 'disk' | (string & {});

export interface ProfileRoot {
  /** Parent of the user-data dirs. */
  dir: string;
  /** Whether that is memory (tmpfs). */
  inMemory: boolean;
  /** Why auto chose disk, for the start log. */
  note?: string;
}

export async function isTmpfsWithRoom(dir: string, minFree = MIN_TMPFS_FREE_BYTES): Promise<boolean> {
  try {
    const s = await fs.statfs(dir);
    return s.type === TMPFS_MAGIC && s.bavail * s.bsize >= minFree;
  } catch {
    return false;
  }
}

/**
 * Resolves BROWSER_PROFILE_DIR for a node whose disk work dir is `diskDir`:
 * `disk` → diskDir; an absolute path → that path; `auto` → a private directory on /dev/shm named
 * after the data dir (two control planes on one machine keep apart), or diskDir when /dev/shm is
 * not a tmpfs with room or the directory there is not safely ours.
 */
export async function resolveProfileRoot(setting: ProfileSetting, diskDir: string, dataDir: string, shmDir = SHM_DIR): Promise<ProfileRoot> {
  if (setting === 'disk') return { dir: diskDir, inMemory: false };
  if (setting !== 'auto') {
    await fs.mkdir(setting, { recursive: true, mode: 0o700 });
    return { dir: setting, inMemory: await isTmpfsWithRoom(setting, 0) };
  }
  if (!(await isTmpfsWithRoom(shmDir))) {
    return { dir: diskDir, inMemory: false, note: `${shmDir} is not a tmpfs with ${MIN_TMPFS_FREE_BYTES / 1024 ** 3} GiB free` };
  }
  const tag = crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12);
  const dir = path.join(shmDir, `caravan-${tag}`);
  try {
    await ownedDir(dir);
  } catch (err) {
    return { dir: diskDir, inMemory: false, note: (err as Error).message };
  }
  return { dir, inMemory: true };
}

/** Creates `dir` (mode 0700) or checks that the existing one is a real directory of this user (not a
 *  link someone else planted in the world-writable /dev/shm), and makes it private. */
async function ownedDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fs.lstat(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${dir} belongs to uid ${st.uid}, not to this user (${uid})`);
  // Profiles hold cookies and saved logins: nobody else may list or enter the directory.
  if ((st.mode & 0o077) !== 0) await fs.chmod(dir, 0o700);
}

/** Removes what launchers left in `dir` (a crash skips their own clean-up); returns how many entries went. */
export async function sweepLauncherDirs(dir: string): Promise<number> {
  const entries = await fs.readdir(dir).catch(() => [] as string[]);
  const stale = entries.filter((e) => e.startsWith(LAUNCHER_DIR_PREFIX));
  await Promise.all(stale.map((e) => fs.rm(path.join(dir, e), { recursive: true, force: true, maxRetries: 3, retryDelay: 50 })));
  return stale.length;
}
