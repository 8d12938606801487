// The session lifecycle end to end on a real control plane: timeout and record removal, the
// ready wait, the change stream, timeouts from the project, project selection, reconnect
// values and the direct-mode cdp-url.
import Browserbase from '@browserbasehq/sdk';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CdpClaims } from '../../schema/token.ts';
import { createApiKey } from '../../server/auth/apiKeys.ts';
import type { Deps } from '../../server/deps.ts';
import type { SessionChange } from '../../server/events/bus.ts';
import { reapOnce } from '../../server/sessions/reaper.ts';
import { controlPlaneClient } from '../../agent/report.ts';
import type { Scheduler } from '../../server/scheduler/types.ts';
import { reportingScheduler, type ReportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, TEST_SECRET, type Harness } from '../harness/server.ts';
import { waitFor } from '../harness/waitFor.ts';

const secret = new TextEncoder().encode(TEST_SECRET);
const sdk = (h: Harness, apiKey: string) => new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': apiKey } });

async function api(h: Harness, apiKey: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.url}${path}`, {
    method,
    headers: { 'x-svc-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/**
 * The deps with session reads and deletes limited to one project. reapOnce works on the whole
 * (shared) test database, and other test files run alongside: advancing this harness's clock
 * must not time out or remove their sessions. The reaper's own conditions are unchanged.
 */
function onlyProject(deps: Deps, projectId: string): Deps {
  const db = deps.db.$extends({
    query: {
      session: {
        findMany: ({ args, query }) => query({ ...args, where: { ...args.where, projectId } }),
        deleteMany: ({ args, query }) => query({ ...args, where: { ...args.where, projectId } }),
      },
    },
  });
  return { ...deps, db: db as unknown as Deps['db'] };
}

describe('timeout and record removal (controllable clock)', () => {
  let h: Harness;
  let sched: ReportingScheduler;
  const t0 = Date.now();
  let t = t0;

  beforeAll(async () => {
    h = await startHarness({
      clock: { now: () => t },
      scheduler: (deps) => (sched = reportingScheduler({ deps })),
      // The background reaper must not run: this test runs reapOnce itself.
      env: { SESSION_RECORD_RETENTION: '30', REAPER_INTERVAL_MS: '3600000' },
    });
  });
  afterAll(() => h?.stop());

  it('times a session out after its timeout, stops its browser, and removes the record after the retention while usage still counts it', async () => {
    const { projectId, apiKey } = await h.project();
    const bb = sdk(h, apiKey);
    const s = await bb.sessions.create({ projectId, api_timeout: 60 });
    const reap = () => reapOnce(onlyProject(h.deps, projectId));
    expect(s.status).toBe('RUNNING');
    expect(Date.parse(s.expiresAt)).toBe((Math.floor(t0 / 1000) + 60) * 1000);

    // One second before the timeout nothing happens.
    t = t0 + 59_000;
    expect(await reap()).toEqual({ timedOut: 0, removed: 0 });
    expect((await bb.sessions.retrieve(s.id)).status).toBe('RUNNING');
    expect(sched.stopped).toEqual([]);

    t = t0 + 61_000;
    expect(await reap()).toEqual({ timedOut: 1, removed: 0 });
    const ended = await bb.sessions.retrieve(s.id);
    expect(ended.status).toBe('TIMED_OUT');
    await waitFor(() => sched.stopped.includes(`fake:${s.id}`), { what: 'stop() with the session taskRef' });
    expect(sched.stopped.filter((r) => r === `fake:${s.id}`)).toHaveLength(1);
    // Still listed as TIMED_OUT, not COMPLETED.
    expect((await bb.sessions.list({ status: 'TIMED_OUT' })).map((x) => x.id)).toEqual([s.id]);
    expect((await bb.sessions.list({ status: 'COMPLETED' })).map((x) => x.id)).toEqual([]);

    // Within the retention the record stays readable.
    t = t0 + 61_000 + 29_000;
    expect(await reap()).toEqual({ timedOut: 0, removed: 0 });
    expect((await bb.sessions.retrieve(s.id)).status).toBe('TIMED_OUT');

    t = t0 + 61_000 + 31_000;
    expect(await reap()).toEqual({ timedOut: 0, removed: 1 });
    await expect(bb.sessions.retrieve(s.id)).rejects.toMatchObject({ status: 404 });
    expect(await h.deps.db.sessionEvent.count({ where: { sessionId: s.id } })).toBe(0);

    const usage = await api(h, apiKey, 'GET', `/v1/projects/${projectId}/usage`);
    expect(usage.status).toBe(200);
    // 61 s of browser time, counted from creation to the timeout (not to the removal).
    expect(usage.body.data.browserMinutes).toBeCloseTo(61 / 60, 2);
    expect(usage.body.data.proxyBytes).toBe(0);
    // A later pass finds nothing and does not stop it again.
    expect(await reap()).toEqual({ timedOut: 0, removed: 0 });
    expect(sched.stopped.filter((r) => r === `fake:${s.id}`)).toHaveLength(1);
  });
});

describe('ready wait', () => {
  let h: Harness;
  let sched: ReportingScheduler;

  beforeAll(async () => {
    h = await startHarness({ scheduler: (deps) => (sched = reportingScheduler({ deps, silent: true })), env: { SERVICE_READY_WAIT_MS: '500' } });
  });
  afterAll(() => h?.stop());

  it('answers 504 when the browser is not ready in time, ends the session in ERROR and stops what was started', async () => {
    const { projectId, apiKey } = await h.project();
    const startedAt = Date.now();
    const res = await api(h, apiKey, 'POST', '/v1/sessions', { projectId });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(450);
    expect(res.status).toBe(504);
    expect(Object.keys(res.body).sort()).toEqual(['message', 'success']);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toMatch(/not ready within 0\.5 s/);
    // Retrying would wait the whole ready wait again: the SDK must not do it on its own.
    expect(res.headers.get('x-should-retry')).toBe('false');

    expect(sched.started).toHaveLength(1);
    const id = sched.started[0]!.sessionId;
    expect(res.body.message).toContain(id);
    const got = await sdk(h, apiKey).sessions.retrieve(id);
    expect(got.status).toBe('ERROR');
    const row = await h.deps.db.session.findUniqueOrThrow({ where: { id } });
    expect(row.status).toBe('FAILED');
    expect(row.endReason).toBe('READY_WAIT_EXPIRED');
    await waitFor(() => sched.stopped.includes(`fake:${id}`), { what: 'stop() after the ready wait' });
    // The failed session does not hold a concurrency slot.
    expect(await h.deps.db.session.count({ where: { projectId, status: { notIn: ['STOPPED', 'FAILED'] } } })).toBe(0);
  });
});

describe('sessions on a working control plane', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ scheduler: (deps) => reportingScheduler({ deps }), env: { SERVICE_MAX_SESSION_TIMEOUT: '7200' } });
  });
  afterAll(() => h?.stop());

  it('records every transition of a created and released session in order in the change stream', async () => {
    const { projectId, apiKey } = await h.project();
    const bb = sdk(h, apiKey);
    const published: SessionChange[] = [];
    const unsubscribe = h.deps.bus.subscribe((c) => void published.push(c));
    try {
      const s = await bb.sessions.create({ projectId });
      const released = await bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' });
      expect(released.status).toBe('TERMINATING');

      const events = await h.deps.db.sessionEvent.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } });
      expect(events.map((e) => e.to)).toEqual(['CREATING', 'PROVISIONING', 'READY', 'STOPPED']);
      expect(events.map((e) => e.from)).toEqual([null, 'CREATING', 'PROVISIONING', 'READY']);
      expect(events.at(-1)!.reason).toBe('RELEASED');
      for (let i = 1; i < events.length; i++) expect(events[i]!.seq > events[i - 1]!.seq).toBe(true);
      for (const e of events) expect(e.projectId).toBe(projectId);
      // Every change and the row carry the time it happened, whatever the process time zone.
      const row = await h.deps.db.session.findUniqueOrThrow({ where: { id: s.id } });
      const usage = await h.deps.db.usage.findUniqueOrThrow({ where: { sessionId: s.id } });
      for (const at of [...events.map((e) => e.createdAt), row.createdAt, row.updatedAt, row.endedAt, usage.startedAt, usage.endedAt]) {
        expect(Math.abs(Date.now() - (at?.getTime() ?? 0))).toBeLessThan(60_000);
      }
      expect(row.endReason).toBe('RELEASED');

      // The bus carried every change, the creation included, once, with its place (seq) in the
      // stored stream. Notifications of back-to-back changes may arrive out of order; seq orders them.
      const mine = await waitFor(() => {
        const m = published.filter((c) => c.sessionId === s.id);
        return m.length >= 4 ? m : undefined;
      }, { what: 'four published changes' });
      const bySeq = [...mine].sort((x, y) => (BigInt(x.seq) < BigInt(y.seq) ? -1 : 1));
      expect(bySeq.map((c) => [c.seq, c.from, c.to])).toEqual(events.map((e) => [e.seq.toString(), e.from, e.to]));
    } finally {
      unsubscribe();
    }
  });

  it('applies the project defaultTimeout when no timeout is sent', async () => {
    const { projectId, apiKey } = await h.project({ defaultTimeout: 600 });
    const s = await sdk(h, apiKey).sessions.create({ projectId });
    const { payload } = await jwtVerify(s.signingKey!, secret);
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(Date.parse(s.expiresAt)).toBe(payload.exp! * 1000);
    expect((await h.deps.db.session.findUniqueOrThrow({ where: { id: s.id } })).timeout).toBe(600);
  });

  it('caps the project defaultTimeout at SERVICE_MAX_SESSION_TIMEOUT and accepts a timeout equal to it', async () => {
    const { projectId, apiKey } = await h.project({ defaultTimeout: 86_400 });
    const bb = sdk(h, apiKey);
    const capped = await bb.sessions.create({ projectId });
    const { payload } = await jwtVerify(capped.signingKey!, secret);
    expect(payload.exp! - payload.iat!).toBe(7200);
    expect((await h.deps.db.session.findUniqueOrThrow({ where: { id: capped.id } })).timeout).toBe(7200);

    const explicit = await bb.sessions.create({ projectId, api_timeout: 7200 });
    expect((await h.deps.db.session.findUniqueOrThrow({ where: { id: explicit.id } })).timeout).toBe(7200);
  });

  it('lets x-svc-project-id pick the project of a key that reaches several, and asks for one when none is named', async () => {
    const p1 = await h.project();
    const p2 = await h.project();
    const { key } = await createApiKey(h.deps.db, [p1.projectId, p2.projectId]);

    const projects = await api(h, key, 'GET', '/v1/projects');
    expect(projects.body.data.map((p: { id: string }) => p.id).sort()).toEqual([p1.projectId, p2.projectId].sort());

    const in2 = await api(h, key, 'POST', '/v1/sessions', {}, { 'x-svc-project-id': p2.projectId });
    expect(in2.status).toBe(201);
    expect(in2.body.projectId).toBe(p2.projectId);
    const in1 = await api(h, key, 'POST', '/v1/sessions', {}, { 'x-svc-project-id': p1.projectId });
    expect(in1.status).toBe(201);
    expect(in1.body.projectId).toBe(p1.projectId);
    // An explicit projectId in the body wins over the header.
    const body1 = await api(h, key, 'POST', '/v1/sessions', { projectId: p1.projectId }, { 'x-svc-project-id': p2.projectId });
    expect(body1.body.projectId).toBe(p1.projectId);
    // The header also scopes list and project reads.
    const listed = await api(h, key, 'GET', '/v1/sessions', undefined, { 'x-svc-project-id': p2.projectId });
    expect((listed.body as unknown as { id: string }[]).map((s) => s.id)).toEqual([in2.body.id]);

    const before = await h.deps.db.session.count({ where: { projectId: { in: [p1.projectId, p2.projectId] } } });
    const none = await api(h, key, 'POST', '/v1/sessions', {});
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ success: false, message: expect.stringMatching(/several projects.*x-svc-project-id/) });
    expect(await h.deps.db.session.count({ where: { projectId: { in: [p1.projectId, p2.projectId] } } })).toBe(before);
  });

  it('returns the same connectUrl and signingKey on every retrieve, for reconnects', async () => {
    const { projectId, apiKey } = await h.project();
    const bb = sdk(h, apiKey);
    const s = await bb.sessions.create({ projectId });
    const a = await bb.sessions.retrieve(s.id);
    const b = await bb.sessions.retrieve(s.id);
    expect(a.connectUrl).toBe(s.connectUrl);
    expect(b.connectUrl).toBe(s.connectUrl);
    expect(a.signingKey).toBe(s.signingKey);
    expect(b.signingKey).toBe(s.signingKey);
    expect(a.connectUrl).toBe(`ws://127.0.0.1:9?signingKey=${s.signingKey}`);
    expect((a as unknown as { publicIP: string }).publicIP).toBe('127.0.0.1');
  });

  it('gives a direct-mode cdpUrl with a token for that session that never outlives it', async () => {
    const { projectId, apiKey } = await h.project();
    const bb = sdk(h, apiKey);
    const s = await bb.sessions.create({ projectId, api_timeout: 600, userMetadata: { userId: 'u-9' } });

    const res = await api(h, apiKey, 'POST', `/sessions/${s.id}/cdp-url`, { expiresIn: 120 });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const data = res.body.data as { cdpUrl: string; signingKey: string; expiresAt: string };
    expect(data.cdpUrl).toBe(`ws://127.0.0.1:9/session/${s.id}`);
    const { payload } = await jwtVerify(data.signingKey, secret, { audience: 'cdp-access' });
    const claims = CdpClaims.parse(payload);
    expect(claims.sessionId).toBe(s.id);
    expect(claims.sub).toBe(s.id);
    expect(claims.projectId).toBe(projectId);
    expect(claims.userId).toBe('u-9');
    expect(claims.exp - claims.iat).toBe(120);
    expect(Date.parse(data.expiresAt)).toBe(claims.exp * 1000);
    expect(Date.parse(data.expiresAt)).toBeLessThanOrEqual(Date.parse(s.expiresAt));
    expect(data.signingKey).not.toBe(s.signingKey);

    // Asking for longer than the session lives gets the session's own expiry.
    const long = await api(h, apiKey, 'POST', `/sessions/${s.id}/cdp-url`, { expiresIn: 86_400 });
    expect(long.status).toBe(200);
    expect(long.body.data.expiresAt).toBe(s.expiresAt);
    const { payload: longClaims } = await jwtVerify(long.body.data.signingKey, secret);
    expect(longClaims.exp! * 1000).toBe(Date.parse(s.expiresAt));

    // An ended session gets no new token.
    await bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' });
    const ended = await api(h, apiKey, 'POST', `/sessions/${s.id}/cdp-url`, {});
    expect(ended.status).toBe(409);
    expect(ended.body).toEqual({ success: false, message: expect.stringMatching(/has ended/) });
  });
});

describe('a browser that is ready at once (warm browser)', () => {
  let h: Harness;

  beforeAll(async () => {
    // Its launcher reports READY before the scheduler's start() has even returned, as a
    // browser taken from a warm pool can.
    const warm = (deps: Omit<Deps, 'scheduler'>): Scheduler => {
      const node = deps.db.node.upsert({
        where: { id: 'warm-node' },
        create: { id: 'warm-node', name: 'warm-node', publicHost: '127.0.0.1', cdpPort: 9, capacity: 1000, status: 'UP' },
        update: {},
      });
      return {
        async start(spec) {
          await node;
          await controlPlaneClient(spec.controlUrl, spec.launcherToken).reportSession({
            sessionId: spec.sessionId, status: 'READY', nodeId: 'warm-node', browser: { port: 9, wsPath: '/devtools/browser/warm' },
          });
          return { taskRef: `warm:${spec.sessionId}`, nodeId: 'warm-node' };
        },
        async stop() {},
        async close() {},
      };
    };
    h = await startHarness({ scheduler: warm, env: { SERVICE_READY_WAIT_MS: '5000' } });
  });
  afterAll(() => h?.stop());

  it('answers the create with a RUNNING session instead of waiting out the ready wait', async () => {
    const { projectId, apiKey } = await h.project();
    const res = await api(h, apiKey, 'POST', '/v1/sessions', { projectId });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe('RUNNING');
    const row = await h.deps.db.session.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.status).toBe('READY');
    // The task reference is kept, so that release and timeout can stop the browser.
    expect(row.taskRef).toBe(`warm:${res.body.id}`);
    const events = await h.deps.db.sessionEvent.findMany({ where: { sessionId: res.body.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.to)).toEqual(['CREATING', 'PROVISIONING', 'READY']);
  });
});
