// GET /api/activity/events: session changes and runtime actions as server-sent events, heartbeats,
// and resuming with Last-Event-ID (from the ring, or from the SessionEvent table).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityEvent, SessionActivity } from '../../schema/runtime.ts';
import { waitFor } from '../harness/waitFor.ts';
import { DASHBOARD_TOKEN, FAKE_TUNNEL, operator, readySession, startRuntimeHarness, type RuntimeHarness } from './harness.ts';
import { openSse, type SseClient, type SseEvent } from './sse.ts';

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness({ env: { PUBLIC_HTTPS_ENABLED: 'true', PUBLIC_HTTPS_TUNNEL_BIN: FAKE_TUNNEL, DASHBOARD_TOKEN }, runtime: { heartbeatMs: 100 } });
});
afterAll(async () => h?.stop());

const events = (path = '', headers: Record<string, string> = {}) => openSse(`${h.url}/api/activity/events${path}`, { ...operator, ...headers });
const data = (e: SseEvent) => JSON.parse(e.data) as ActivityEvent;
const ofSession = (id: string) => (e: SseEvent) => e.event === 'session' && (data(e) as SessionActivity).sessionId === id;
const to = (id: string, status: string) => (e: SseEvent) => ofSession(id)(e) && (data(e) as SessionActivity).to === status;
const n = (id: string | undefined) => Number(id?.split('.')[1]);

async function release(apiKey: string, projectId: string, id: string) {
  const res = await fetch(`${h.url}/v1/sessions/${id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey }, body: JSON.stringify({ projectId, status: 'REQUEST_RELEASE' }) });
  expect(res.status).toBe(200);
}

describe('the activity stream', () => {
  it('opens at once, streams session changes with ids, and sends heartbeats', async () => {
    const sse = await events();
    try {
      expect(sse.status).toBe(200);
      expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(sse.headers.get('cache-control')).toBe('no-store');
      await sse.waitForComment((c) => c === 'connected');
      const s = await readySession(h);
      const ready = await sse.waitFor(to(s.id, 'READY'));
      expect(ready.id).toMatch(/^[0-9a-f]{8}\.\d+\.\d+$/);
      expect(data(ready)).toMatchObject({ type: 'session', sessionId: s.id, from: 'PROVISIONING', to: 'READY', projectId: s.projectId });
      await sse.waitForComment((c) => c === 'heartbeat', 2_000);
    } finally {
      sse.close();
    }
  });

  it('resumes after the Last-Event-ID without losing or repeating events', async () => {
    const s = await readySession(h);
    const first = await events();
    let lastSeen: string | undefined;
    try {
      await first.waitForComment((c) => c === 'connected');
      // The session is READY already; release it while this client watches, then disconnect.
      await release(s.apiKey, s.projectId, s.id);
      lastSeen = (await first.waitFor(to(s.id, 'STOPPED'))).id;
    } finally {
      first.close();
    }
    const s2 = await readySession(h);
    await release(s2.apiKey, s2.projectId, s2.id);
    await waitFor(async () => (await h.deps.db.session.findUnique({ where: { id: s2.id } }))?.status === 'STOPPED');

    // Missed while away: s2's changes. Nothing at or before the resume point comes again.
    const again: SseClient = await events('', { 'last-event-id': lastSeen! });
    try {
      const stopped = await again.waitFor(to(s2.id, 'STOPPED'));
      const mine = again.events.filter((e) => ofSession(s2.id)(e)).map((e) => (data(e) as SessionActivity).to);
      expect(mine).toEqual(['CREATING', 'PROVISIONING', 'READY', 'STOPPED']);
      expect(again.events.filter(ofSession(s.id))).toEqual([]);
      expect(again.events.every((e) => n(e.id) > n(lastSeen))).toBe(true);
      expect(again.events.some((e) => e.event === 'gap')).toBe(false);
      expect(n(stopped.id)).toBeGreaterThan(n(lastSeen));
    } finally {
      again.close();
    }
  });

  it('replays runtime actions from the ring', async () => {
    const probe = await events();
    const s = await readySession(h);
    const id = (await probe.waitFor(to(s.id, 'READY'))).id!;
    probe.close();
    const boot = id.split('.')[0];
    const all = await events(`?lastEventId=${boot}.0.0`);
    try {
      const ready = await all.waitFor((e) => e.event === 'action' && (data(e) as { name: string }).name === 'public_https_entrypoint_ready');
      expect(data(ready)).toMatchObject({ type: 'action', category: 'bot_runtime', name: 'public_https_entrypoint_ready' });
      expect(JSON.stringify(data(ready))).toMatch(/trycloudflare\.com/);
      const names = all.events.filter((e) => e.event === 'action').map((e) => (data(e) as { name: string }).name);
      expect(names.slice(0, 2)).toEqual(['public_https_entrypoint_starting', 'public_https_entrypoint_ready']);
    } finally {
      all.close();
    }
  });

  it('re-reads session changes from the database for an id it no longer holds', async () => {
    const s = await readySession(h);
    await release(s.apiKey, s.projectId, s.id);
    const rows = await waitFor(async () => {
      const r = await h.deps.db.sessionEvent.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } });
      return r.some((x) => x.to === 'STOPPED') ? r : undefined;
    });
    const provisioning = rows.find((r) => r.to === 'PROVISIONING')!;
    // An id of another process (a restart, or another replica behind a load balancer).
    const sse = await events('', { 'last-event-id': `deadbeef.7.${provisioning.seq}` });
    try {
      await sse.waitFor(to(s.id, 'STOPPED'));
      expect(sse.events[0]!.event).toBe('gap');
      expect(sse.events.filter(ofSession(s.id)).map((e) => (data(e) as SessionActivity).to)).toEqual(['READY', 'STOPPED']);
      const seqs = sse.events.filter((e) => e.event === 'session').map((e) => BigInt((data(e) as SessionActivity).seq));
      expect(seqs.every((q) => q > provisioning.seq)).toBe(true);
    } finally {
      sse.close();
    }
  });

  it('needs the dashboard credentials', async () => {
    const anon = await fetch(`${h.url}/api/activity/events`);
    expect(anon.status).toBe(401);
  });
});
