// Project concurrency: admission is race-free under parallel creates, and a released slot is
// reusable at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, type Harness } from '../harness/server.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ scheduler: (deps) => reportingScheduler({ deps }) });
});
afterAll(() => h?.stop());

const create = (apiKey: string, body: unknown = {}) =>
  fetch(`${h.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> }));

describe('project concurrency limit', () => {
  it('admits exactly the limit out of 20 parallel creates and answers 429 naming the limit and count to the rest', async () => {
    const { projectId, apiKey } = await h.project({ concurrency: 5 });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(apiKey, { projectId, userMetadata: { n: i } })));

    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(5).fill(201), ...Array(15).fill(429)]);
    for (const a of created) {
      expect(a.body.status).toBe('RUNNING');
      expect(a.body.projectId).toBe(projectId);
      expect(a.body.connectUrl).toEqual(expect.stringContaining('signingKey='));
    }
    expect(new Set(created.map((a) => a.body.id)).size).toBe(5);
    for (const a of refused) {
      expect(Object.keys(a.body).sort()).toEqual(['message', 'success']);
      expect(a.body.success).toBe(false);
      expect(a.body.message).toMatch(/concurrency limit/);
      expect(a.body.message).toMatch(/\b5 of 5\b/); // current count and limit
      expect(a.body.message).toContain(projectId);
      // The SDK must not retry into the limit.
      expect(a.headers.get('x-should-retry')).toBe('false');
    }

    expect(await h.deps.db.session.count({ where: { projectId } })).toBe(5);
    expect(await h.deps.db.usage.count({ where: { projectId } })).toBe(5);
    expect(await h.deps.db.sessionEvent.count({ where: { projectId, to: 'CREATING' } })).toBe(5);
  });

  it('admits a new session as soon as one is released', async () => {
    const { projectId, apiKey } = await h.project({ concurrency: 2 });
    const first = await create(apiKey);
    const second = await create(apiKey);
    expect([first.status, second.status]).toEqual([201, 201]);
    const full = await create(apiKey);
    expect(full.status).toBe(429);
    expect(full.body.message).toMatch(/\b2 of 2\b/);

    const release = await fetch(`${h.url}/v1/sessions/${String(first.body.id)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ projectId, status: 'REQUEST_RELEASE' }),
    });
    expect(release.status).toBe(200);

    const again = await create(apiKey);
    expect(again.status).toBe(201);
    expect(again.body.status).toBe('RUNNING');
    expect(await h.deps.db.session.count({ where: { projectId, status: { notIn: ['STOPPED', 'FAILED'] } } })).toBe(2);
  });

  it('counts each project on its own', async () => {
    const a = await h.project({ concurrency: 1 });
    const b = await h.project({ concurrency: 1 });
    expect((await create(a.apiKey)).status).toBe(201);
    expect((await create(b.apiKey)).status).toBe(201);
    expect((await create(a.apiKey)).status).toBe(429);
  });
});
