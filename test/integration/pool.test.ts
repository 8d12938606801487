// The local node's warm pool and spare launchers, with real Chromium: a session without a
// context gets a browser started before it was asked for, which serves it alone and is replaced;
// a session with a context starts in a launcher loaded beforehand; neither pushes the node past
// its capacity.
import fs from 'node:fs';
import path from 'node:path';
import Browserbase from '@browserbasehq/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserDir, browserPids, launcherPid } from '../harness/processes.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { waitFor } from '../harness/waitFor.ts';

const POOL = 2;
const CAPACITY = 3;

let h: Harness;
let bb: Browserbase;
let projectId: string;
let apiKey: string;

beforeAll(async () => {
  h = await startHarness({ env: { POOL_SIZE: String(POOL), POOL_SPARE_LAUNCHERS: '1', NODE_CAPACITY: String(CAPACITY) } });
  const p = await h.project({ concurrency: 10 });
  projectId = p.projectId;
  apiKey = p.apiKey;
  bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
});
afterAll(() => h?.stop());

const browsersDir = () => h.profilesDir;
/** Seconds since boot, as /proc counts process start times (10 ms ticks). */
const uptime = () => Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
const startedAt = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]) / 100;
const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

/** Browsers of this node: one per user-data dir (its main process, not its helpers, which carry
 *  --type=; a helper caught between fork and exec still shows the main command line). */
function mainBrowsers(): Array<{ pid: number; dir: string }> {
  const out: Array<{ pid: number; dir: string }> = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const dirArg = args.find((a) => a.startsWith(`--user-data-dir=${browsersDir()}`));
    const dir = dirArg?.slice('--user-data-dir='.length);
    if (dir && !args.some((a) => a.startsWith('--type=')) && !out.some((b) => b.dir === dir)) out.push({ pid: Number(entry), dir });
  }
  return out;
}

/** Pooled browsers that answer CDP (their DevToolsActivePort is written); a pooled browser
 *  handed to a session keeps its dir, so the dirs of running sessions are left out. */
const warmPool = (sessionDirs: string[] = []) => mainBrowsers().filter((b) =>
  path.basename(b.dir).startsWith('caravan-pool-') && !sessionDirs.includes(b.dir) && fs.existsSync(path.join(b.dir, 'DevToolsActivePort')));

/** Spare launchers waiting for a session: their profile dir exists, no browser uses it yet. */
function spareDirs(): string[] {
  const used = new Set(mainBrowsers().map((b) => b.dir));
  return fs.readdirSync(browsersDir()).filter((d) => d.startsWith('caravan-standby-')).map((d) => path.join(browsersDir(), d)).filter((d) => !used.has(d));
}

const release = (id: string) => bb.sessions.update(id, { projectId, status: 'REQUEST_RELEASE' });

describe('warm pool', () => {
  it('hands a browser started before the create to a session without a context, never reuses it, and refills', async () => {
    const before = await waitFor(() => (warmPool().length === POOL ? warmPool() : undefined), { timeoutMs: 30_000, what: 'a full warm pool' });
    const askedAt = uptime();
    const s = await bb.sessions.create({ projectId });
    const [pid] = await browserPids(h.deps.db, s.id);
    expect(before.map((b) => b.pid)).toContain(pid);
    expect(startedAt(pid!)).toBeLessThan(askedAt);
    expect(s.status).toBe('RUNNING');

    await release(s.id);
    await waitFor(() => !alive(pid!), { what: 'the released pooled browser to exit' });
    // Back to a full pool, without the browser that served the session.
    const after = await waitFor(() => (warmPool().length === POOL ? warmPool() : undefined), { timeoutMs: 30_000, what: 'the pool to refill' });
    expect(after.map((b) => b.pid)).not.toContain(pid);
    const next = await bb.sessions.create({ projectId });
    const [nextPid] = await browserPids(h.deps.db, next.id);
    expect(nextPid).not.toBe(pid);
    const nextLauncher = await launcherPid(h.deps.db, next.id);
    await release(next.id);
    await waitFor(() => !alive(nextLauncher!), { what: 'the second session to end' });
  });

  it('starts a session with a context in a spare launcher loaded before the create, and loads a new spare', async () => {
    const ctx = await bb.contexts.create({ projectId });
    await waitFor(() => spareDirs().length >= 1, { timeoutMs: 30_000, what: 'a spare launcher' });
    const askedAt = uptime();
    const s = await bb.sessions.create({ projectId, browserSettings: { context: { id: ctx.id, persist: false } } });
    const dir = await browserDir(h.deps.db, s.id);
    expect(path.basename(dir)).toMatch(/^caravan-standby-/);
    const launcher = await launcherPid(h.deps.db, s.id);
    const [browser] = await browserPids(h.deps.db, s.id);
    // The launcher (Node) was loaded before the create; the browser was started for it.
    expect(startedAt(launcher!)).toBeLessThan(askedAt);
    expect(startedAt(browser!)).toBeGreaterThanOrEqual(askedAt);
    await waitFor(() => spareDirs().length >= 1, { timeoutMs: 30_000, what: 'a new spare launcher' });
    await release(s.id);
    await waitFor(() => !alive(launcher!), { what: 'the session launcher to exit' });
  });

  it('never runs more browsers than the node capacity, pooled ones included', async () => {
    await waitFor(() => warmPool().length === POOL, { timeoutMs: 30_000, what: 'a full warm pool' });
    let most = mainBrowsers().length;
    const watch = setInterval(() => {
      most = Math.max(most, mainBrowsers().length);
    }, 20);
    try {
      const sessions: Array<{ id: string }> = [];
      sessions.push(await bb.sessions.create({ projectId }));
      // Pool refilled beside it: 1 session + 2 pooled = the capacity.
      const first = [await browserDir(h.deps.db, sessions[0]!.id)];
      await waitFor(() => warmPool(first).length === POOL, { timeoutMs: 30_000, what: 'the pool to refill beside the session' });
      // A session the pool cannot serve (it has a context) makes room by closing a pooled browser first.
      const ctx = await bb.contexts.create({ projectId });
      sessions.push(await bb.sessions.create({ projectId, browserSettings: { context: { id: ctx.id, persist: false } } }));
      sessions.push(await bb.sessions.create({ projectId }));
      const over = await fetch(`${h.url}/v1/sessions`, { method: 'POST', headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ projectId }) });
      expect(over.status).toBe(503);
      expect(((await over.json()) as { message: string }).message).toMatch(/capacity of 3 browsers/);
      // Capacity freed by a release is what the pool refills into, no more.
      await release(sessions[0]!.id);
      await waitFor(async () => (await bb.sessions.retrieve(sessions[0]!.id)).status !== 'RUNNING', { what: 'the release' });
      const running = await Promise.all(sessions.slice(1).map((s) => browserDir(h.deps.db, s.id)));
      await waitFor(() => warmPool(running).length === 1 && mainBrowsers().length === CAPACITY, { timeoutMs: 30_000, what: 'one pooled browser in the freed room' });
      for (const s of sessions.slice(1)) await release(s.id);
    } finally {
      clearInterval(watch);
    }
    expect(most).toBeLessThanOrEqual(CAPACITY);
  });
});
