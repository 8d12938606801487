// The public HTTPS entrypoint's supervised tunnel child, with a stand-in cloudflared
// (test/fixtures/fake-cloudflared.cjs): discovery of the URL, restart after an exit, no restart
// when the binary is missing, and a shutdown that leaves no process behind.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { PublicHttpsState } from '../../schema/runtime.ts';
import { recordingAdvertiser } from '../../server/runtime/publicHttps/advertise.ts';
import { createPublicHttps, type ActionInput, type PublicHttps } from '../../server/runtime/publicHttps/tunnel.ts';
import { waitFor } from '../harness/waitFor.ts';
import { DASHBOARD_TOKEN, FAKE_TUNNEL, startRuntimeHarness } from './harness.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const started: PublicHttps[] = [];
const tmp = fs.mkdtemp(path.join(os.tmpdir(), 'caravan-tunnel-'));
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});
afterAll(async () => fs.rm(await tmp, { recursive: true, force: true }));

function tunnel(opts: { bin?: string; env?: Record<string, string>; killAfterMs?: number } = {}) {
  const actions: ActionInput[] = [];
  const states: PublicHttpsState[] = [];
  const advertiser = recordingAdvertiser();
  const t = createPublicHttps({
    enabled: true,
    targetUrl: () => 'http://127.0.0.1:8420',
    bin: opts.bin ?? FAKE_TUNNEL,
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    retryDelayMs: 100,
    killAfterMs: opts.killAfterMs ?? 3_000,
    log: pino({ level: 'silent' }),
    clock: { now: () => Date.now() },
    action: (a) => actions.push(a),
    advertiser,
    advertisement: () => ({ name: 'Caravan test', port: 8420 }),
  });
  t.onChange((s) => states.push(s));
  started.push(t);
  return { t, actions, states, advertiser };
}

describe('the public HTTPS entrypoint', () => {
  it('starts the tunnel child, finds its public URL and advertises only the URL', async () => {
    const argvFile = path.join(await tmp, 'argv.json');
    const { t, actions, states, advertiser } = tunnel({ env: { FAKE_TUNNEL_ARGV_FILE: argvFile } });
    expect(t.state().status).toBe('idle');
    t.start();
    expect(t.state()).toMatchObject({ status: 'starting', enabled: true, publicUrl: '', targetUrl: 'http://127.0.0.1:8420' });
    expect(t.state().pid).toBeGreaterThan(0);
    expect(advertiser.current).toBeUndefined();

    const ready = await waitFor(() => (t.state().status === 'ready' ? t.state() : undefined), { what: 'ready' });
    expect(ready.publicUrl).toMatch(/^https:\/\/fake-[0-9a-f]{6}-tunnel\.trycloudflare\.com$/);
    expect(ready.lastError).toBe('');
    expect(Date.parse(ready.startedAt)).toBeGreaterThan(Date.now() - 10_000);
    expect(t.publicHost()).toBe(new URL(ready.publicUrl).hostname);
    expect(states.map((s) => s.status)).toEqual(['starting', 'ready']);
    expect(actions.map((a) => a.name)).toEqual(['public_https_entrypoint_starting', 'public_https_entrypoint_ready']);
    expect(actions.every((a) => a.name === 'bot_error' || a.category === 'bot_runtime')).toBe(true);
    expect(JSON.parse(await fs.readFile(argvFile, 'utf8'))).toEqual(['tunnel', '--url', 'http://127.0.0.1:8420', '--no-autoupdate']);
    await waitFor(() => advertiser.current, { what: 'advertisement' });
    expect(advertiser.current).toEqual({ name: 'Caravan test', port: 8420, txt: { tunnelUrl: ready.publicUrl } });
  });

  it('goes to error with bot_error when the child exits, then restarts it to ready', async () => {
    const once = path.join(await tmp, 'exited-once');
    const { t, actions, states } = tunnel({ env: { FAKE_TUNNEL_EXIT_AFTER_MS: '50', FAKE_TUNNEL_EXIT_ONCE_FILE: once } });
    t.start();
    const firstPid = t.state().pid;
    await waitFor(() => states.some((s) => s.status === 'error'), { what: 'error' });
    const error = states.find((s) => s.status === 'error')!;
    expect(error.lastError).toMatch(/exited unexpectedly \(code 1\)/);
    expect(error.publicUrl).toBe('');
    const ready = await waitFor(() => (t.state().status === 'ready' && t.state().pid !== firstPid ? t.state() : undefined), { what: 'ready again' });
    expect(ready.publicUrl).toMatch(/trycloudflare\.com$/);
    expect(states.map((s) => s.status)).toEqual(['starting', 'ready', 'error', 'starting', 'ready']);
    expect(actions.map((a) => a.name)).toEqual([
      'public_https_entrypoint_starting', 'public_https_entrypoint_ready', 'bot_error',
      'public_https_entrypoint_starting', 'public_https_entrypoint_ready',
    ]);
    expect(alive(firstPid)).toBe(false);
  });

  it('stays in error without retrying when the binary is missing', async () => {
    const { t, actions, states } = tunnel({ bin: path.join(await tmp, 'no-such-cloudflared') });
    t.start();
    await waitFor(() => t.state().status === 'error', { what: 'error' });
    expect(t.state().lastError).toMatch(/not found \(ENOENT\)/);
    expect(t.state().pid).toBe(0);
    expect(actions.at(-1)).toMatchObject({ name: 'bot_error', detail: { retry: false } });
    // Ten retry delays later nothing has been started again.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(states.filter((s) => s.status === 'starting')).toHaveLength(1);
    expect(t.state().status).toBe('error');
  });

  it('stops the child with SIGTERM on shutdown and leaves no process', async () => {
    const { t } = tunnel();
    t.start();
    await waitFor(() => t.state().status === 'ready', { what: 'ready' });
    const pid = t.state().pid;
    expect(alive(pid)).toBe(true);
    await t.stop();
    expect(alive(pid)).toBe(false);
    expect(t.state()).toMatchObject({ status: 'stopped', pid: 0, publicUrl: '' });
  });

  it('kills a child that ignores SIGTERM after the grace period', async () => {
    const { t } = tunnel({ env: { FAKE_TUNNEL_IGNORE_SIGTERM: '1' }, killAfterMs: 300 });
    t.start();
    await waitFor(() => t.state().status === 'ready', { what: 'ready' });
    const pid = t.state().pid;
    const t0 = Date.now();
    await t.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(alive(pid)).toBe(false);
  });

  it('creates no child when disabled', async () => {
    const t = createPublicHttps({
      enabled: false, targetUrl: () => 'http://127.0.0.1:1', bin: FAKE_TUNNEL, env: {}, log: pino({ level: 'silent' }), clock: { now: () => Date.now() },
      action: () => undefined, advertiser: recordingAdvertiser(), advertisement: () => ({ name: 'x', port: 1 }),
    });
    t.start();
    expect(t.state()).toMatchObject({ enabled: false, status: 'disabled', pid: 0, publicUrl: '' });
    await t.stop();
    expect(t.state().status).toBe('disabled');
  });
});

describe('the entrypoint inside the control plane', () => {
  it('reports its state in /api/public-https and /api/stats, and stops before the HTTP server closes', async () => {
    // A wrapper gives the stand-in a knob: on SIGTERM it calls the server and records the answer.
    const dir = await tmp;
    const probe = path.join(dir, 'probe-at-sigterm');
    const wrapper = path.join(dir, 'cloudflared-probe');
    await fs.writeFile(wrapper, `#!/bin/sh\nexport FAKE_TUNNEL_PROBE_FILE='${probe}'\nexec '${FAKE_TUNNEL}' "$@"\n`, { mode: 0o755 });
    const h = await startRuntimeHarness({ env: { PUBLIC_HTTPS_ENABLED: 'true', PUBLIC_HTTPS_TUNNEL_BIN: wrapper, DASHBOARD_TOKEN } });
    let pid = 0;
    try {
      const headers = { 'x-dashboard-token': DASHBOARD_TOKEN };
      const state = await waitFor(async () => {
        const s = (await (await fetch(`${h.url}/api/public-https`, { headers })).json()) as PublicHttpsState;
        return s.status === 'ready' ? s : undefined;
      }, { what: 'entrypoint ready' });
      expect(state).toMatchObject({ enabled: true, provider: 'cloudflared-quick-tunnel', targetUrl: h.url, lastError: '' });
      pid = state.pid;
      const stats = (await (await fetch(`${h.url}/api/stats`, { headers })).json()) as { runtime: { publicHttps: PublicHttpsState }; sessions: { running: number }; nodes: { total: number }; pool: unknown };
      expect(stats.runtime.publicHttps).toEqual(state);
      expect(stats.sessions.running).toBeGreaterThanOrEqual(0);
      expect(stats.nodes.total).toBeGreaterThanOrEqual(0);
      expect(stats).toHaveProperty('pool');
      // The advertised name is the live display name; other test files share the settings row.
      const settings = (await (await fetch(`${h.url}/api/settings`, { headers })).json()) as { effective: { identity: { displayName: string } } };
      expect(h.advertiser.current).toEqual({ name: settings.effective.identity.displayName || 'Caravan', port: h.server.address().port, txt: { tunnelUrl: state.publicUrl } });
      expect(JSON.stringify(h.advertiser.history)).not.toContain(DASHBOARD_TOKEN);
    } finally {
      await h.stop();
    }
    expect(alive(pid)).toBe(false);
    // When the child got SIGTERM the listener still answered (401: the probe has no token).
    expect(await fs.readFile(probe, 'utf8')).toBe('401');
    expect(h.advertiser.current).toBeUndefined();
  });
});
