// The real Browserbase SDK against Caravan: create, list, retrieve, release.
import Browserbase from '@browserbasehq/sdk';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, TEST_SECRET, type Harness } from '../harness/server.ts';

let h: Harness;
let bb: Browserbase;
let projectId: string;

beforeAll(async () => {
  h = await startHarness({ scheduler: (deps) => reportingScheduler({ deps }) });
  const p = await h.project();
  projectId = p.projectId;
  bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
});
afterAll(() => h?.stop());

describe('Browserbase SDK compatibility', () => {
  it('creates a RUNNING session with connectUrl and a signingKey that verifies', async () => {
    const s = await bb.sessions.create({ projectId, userMetadata: { userId: 'u-1', jobBoard: 'x' } });
    expect(s.id).toMatch(/^sess_[0-9a-f-]{36}$/);
    expect(s.status).toBe('RUNNING');
    expect(s.connectUrl).toBe(`ws://127.0.0.1:9?signingKey=${s.signingKey}`);
    const { payload } = await jwtVerify(s.signingKey!, new TextEncoder().encode(TEST_SECRET), { audience: 'cdp-access' });
    expect(payload.sessionId).toBe(s.id);
    expect(payload.userId).toBe('u-1');
  });

  it('lists with plain and JSON q and with status, and retrieves and releases', async () => {
    const a = await bb.sessions.create({ projectId, userMetadata: { userId: 'alice', team: 'red' } });
    const b = await bb.sessions.create({ projectId, userMetadata: { userId: 'bob', team: 'blue' } });
    const plain = await bb.sessions.list({ q: 'alice' });
    expect(plain.map((s) => s.id)).toEqual([a.id]);
    const json = await bb.sessions.list({ q: JSON.stringify({ team: 'blue' }) });
    expect(json.map((s) => s.id)).toEqual([b.id]);

    const got = await bb.sessions.retrieve(a.id);
    expect(got.status).toBe('RUNNING');
    expect(got.userMetadata).toEqual({ userId: 'alice', team: 'red' });

    const released = await bb.sessions.update(a.id, { projectId, status: 'REQUEST_RELEASE' });
    expect(released.status).toBe('TERMINATING');
    expect((await bb.sessions.retrieve(a.id)).status).toBe('COMPLETED');

    const completed = await bb.sessions.list({ status: 'COMPLETED' });
    expect(completed.map((s) => s.id)).toContain(a.id);
    expect(completed.map((s) => s.id)).not.toContain(b.id);
    const running = await bb.sessions.list({ status: 'RUNNING' });
    expect(running.map((s) => s.id)).toContain(b.id);
    expect(running.map((s) => s.id)).not.toContain(a.id);
  });
});
