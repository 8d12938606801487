// Browser profiles on the embedded node: in memory (/dev/shm) by default, private to the data
// dir, caches on disk; a start sweeps what crashed launchers left; nothing stays after release
// or stop.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Browserbase from '@browserbasehq/sdk';
import { afterAll, expect, it } from 'vitest';
import { isTmpfsWithRoom, resolveProfileRoot, SHM_DIR } from '../../agent/launcher/profileRoot.ts';
import { browserDir, browserPids } from '../harness/processes.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { waitFor } from '../harness/waitFor.ts';

let h: Harness | undefined;
afterAll(() => h?.stop());

const exists = (p: string) => fs.stat(p).then(() => true, () => false);

it('keeps session profiles in memory, sweeps leftovers at start, and leaves nothing after release and stop', async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-test-'));
  const diskDir = path.join(dataDir, 'browsers');
  await fs.mkdir(diskDir);
  const expected = await resolveProfileRoot('auto', diskDir, dataDir);
  expect(expected.inMemory).toBe(await isTmpfsWithRoom(SHM_DIR));
  // What a crashed run left: a profile (cookies in it) and a cache dir; and a file that is not ours.
  await fs.mkdir(path.join(expected.dir, 'caravan-pool-crashed', 'Default'), { recursive: true });
  await fs.writeFile(path.join(expected.dir, 'caravan-pool-crashed', 'Default', 'Cookies'), 'secret');
  await fs.mkdir(path.join(diskDir, 'caravan-sess_old-cache-x'));
  await fs.writeFile(path.join(diskDir, 'operator-notes.txt'), 'keep');

  h = await startHarness({ dataDir, env: { POOL_SIZE: '0' } });
  expect(h.profilesDir).toBe(expected.dir);
  expect(await exists(path.join(expected.dir, 'caravan-pool-crashed'))).toBe(false);
  expect(await exists(path.join(diskDir, 'caravan-sess_old-cache-x'))).toBe(false);
  expect(await exists(path.join(diskDir, 'operator-notes.txt'))).toBe(true);

  const { projectId, apiKey } = await h.project();
  const bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': apiKey } });
  const s = await bb.sessions.create({ projectId });
  const profile = await browserDir(h.deps.db, s.id);
  expect(path.dirname(profile)).toBe(expected.dir);
  if (expected.inMemory) {
    // Its HTTP and code caches are on disk, in the node's work dir.
    const [main] = await browserPids(h.deps.db, s.id);
    const cacheArg = (await fs.readFile(`/proc/${main}/cmdline`, 'utf8')).split('\0').find((a) => a.startsWith('--disk-cache-dir='));
    const cacheDir = cacheArg?.slice('--disk-cache-dir='.length) ?? '';
    expect(path.dirname(cacheDir)).toBe(diskDir);
    expect(await exists(cacheDir)).toBe(true);
  }
  await bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' });
  await waitFor(async () => !(await exists(profile)), { timeoutMs: 15_000, what: 'the released session profile to be removed' });

  await h.server.stop();
  expect(await exists(expected.dir)).toBe(!expected.inMemory);
  expect((await fs.readdir(diskDir)).filter((d) => d.startsWith('caravan-'))).toEqual([]);
});
