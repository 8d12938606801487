// Where browser profiles live: in memory when /dev/shm is a roomy tmpfs, private to one data dir,
// on disk otherwise; leftovers of crashed launchers are swept at start.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTmpfsWithRoom, resolveProfileRoot, SHM_DIR, sweepLauncherDirs } from '../../agent/launcher/profileRoot.ts';
import { tempDir } from './helpers.ts';

const shmIsTmpfs = await isTmpfsWithRoom(SHM_DIR);
const made: string[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await fs.rm(d, { recursive: true, force: true });
});
const track = <T extends { dir: string }>(r: T): T => {
  made.push(r.dir);
  return r;
};

describe('resolveProfileRoot', () => {
  it.skipIf(!shmIsTmpfs)('auto: a directory of its own on /dev/shm per data dir, mode 0700', async () => {
    const a = track(await resolveProfileRoot('auto', '/unused/disk', '/var/lib/caravan-a'));
    const again = await resolveProfileRoot('auto', '/unused/disk', '/var/lib/caravan-a/');
    const b = track(await resolveProfileRoot('auto', '/unused/disk', '/var/lib/caravan-b'));
    expect(a.inMemory).toBe(true);
    expect(path.dirname(a.dir)).toBe(SHM_DIR);
    expect(path.basename(a.dir)).toMatch(/^caravan-[0-9a-f]{12}$/);
    expect(again.dir).toBe(a.dir);
    expect(b.dir).not.toBe(a.dir);
    expect((await fs.stat(a.dir)).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!shmIsTmpfs)('auto: makes an existing directory of its own private again', async () => {
    const first = track(await resolveProfileRoot('auto', '/unused/disk', '/var/lib/caravan-perm'));
    await fs.chmod(first.dir, 0o777);
    await resolveProfileRoot('auto', '/unused/disk', '/var/lib/caravan-perm');
    expect((await fs.stat(first.dir)).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!shmIsTmpfs)('auto: refuses a link planted where its directory goes, and stays on disk', async () => {
    const shm = track({ dir: await fs.mkdtemp(path.join(SHM_DIR, 'caravan-test-shm-')) }).dir;
    const elsewhere = track({ dir: await tempDir('caravan-elsewhere-') }).dir;
    const dataDir = '/var/lib/caravan-planted';
    const expected = (await resolveProfileRoot('auto', '/unused/disk', dataDir, shm)).dir;
    await fs.rm(expected, { recursive: true });
    await fs.symlink(elsewhere, expected);
    const r = await resolveProfileRoot('auto', '/var/lib/caravan-planted/browsers', dataDir, shm);
    expect(r).toMatchObject({ dir: '/var/lib/caravan-planted/browsers', inMemory: false });
    expect(r.note).toMatch(/is not a directory/);
    expect(await fs.readdir(elsewhere)).toEqual([]);
  });

  it('auto: stays on disk when the memory directory is not a tmpfs, and says why', async () => {
    const notTmpfs = track({ dir: await tempDir() }).dir;
    expect(await isTmpfsWithRoom(notTmpfs, 0)).toBe(false); // os.tmpdir() is on disk here
    const r = await resolveProfileRoot('auto', '/srv/disk', '/var/lib/caravan', notTmpfs);
    expect(r).toMatchObject({ dir: '/srv/disk', inMemory: false });
    expect(r.note).toMatch(/not a tmpfs with 1 GiB free/);
    expect(await fs.readdir(notTmpfs)).toEqual([]);
  });

  it('disk: the node work dir; a path: that path, created', async () => {
    expect(await resolveProfileRoot('disk', '/srv/disk', '/var/lib/caravan')).toEqual({ dir: '/srv/disk', inMemory: false });
    const parent = track({ dir: await tempDir() }).dir;
    const chosen = path.join(parent, 'profiles');
    const r = await resolveProfileRoot(chosen, '/srv/disk', '/var/lib/caravan');
    expect(r).toEqual({ dir: chosen, inMemory: false });
    expect((await fs.stat(chosen)).isDirectory()).toBe(true);
  });
});

describe('sweepLauncherDirs', () => {
  it('removes what launchers left (caravan-*) and nothing else', async () => {
    const dir = track({ dir: await tempDir() }).dir;
    await fs.mkdir(path.join(dir, 'caravan-pool-abc', 'Default'), { recursive: true });
    await fs.writeFile(path.join(dir, 'caravan-pool-abc', 'Default', 'Cookies'), 'x');
    await fs.mkdir(path.join(dir, 'caravan-sess_1-cache-xyz'));
    await fs.mkdir(path.join(dir, 'keep-me'));
    await fs.writeFile(path.join(dir, 'notes.txt'), 'y');
    expect(await sweepLauncherDirs(dir)).toBe(2);
    expect((await fs.readdir(dir)).sort()).toEqual(['keep-me', 'notes.txt']);
    expect(await sweepLauncherDirs(path.join(dir, 'missing'))).toBe(0);
  });
});
