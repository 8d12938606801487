// Share tokens without a browser (stand-in scheduler): lifetime, limits and refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/waitFor.ts';
import { readySession, startRuntimeHarness, type RuntimeHarness } from './harness.ts';

let h: RuntimeHarness;
let offset = 0;
beforeAll(async () => {
  h = await startRuntimeHarness({ clock: { now: () => Date.now() + offset } });
});
afterAll(async () => h?.stop());

const json = { 'content-type': 'application/json' };
const create = (sessionId: string, body: unknown = {}) => fetch(`${h.url}/api/sessions/${sessionId}/share`, { method: 'POST', headers: json, body: JSON.stringify(body) });
const frame = (token: string) => fetch(`${h.url}/api/voice/share-session/${token}/frame`, { method: 'POST', headers: json, body: JSON.stringify({ data: Buffer.from([0xff, 0xd8, 0xff, 0xd9]).toString('base64') }) });

describe('share tokens', () => {
  it('are 18 random bytes, and end with their lifetime', async () => {
    const { id } = await readySession(h);
    const res = await create(id, { ttlMinutes: 2 });
    expect(res.status).toBe(201);
    const share = (await res.json()) as { token: string; expiresAt: string; publicUrl: string | null };
    expect(Buffer.from(share.token, 'base64url')).toHaveLength(18);
    expect(share.publicUrl).toBeNull(); // the entrypoint is disabled here
    expect((await fetch(`${h.url}/share/${share.token}`)).status).toBe(200);
    expect((await frame(share.token)).status).toBe(202);

    offset = 2 * 60_000 + 1_000;
    try {
      expect((await fetch(`${h.url}/share/${share.token}`)).status).toBe(404);
      expect((await frame(share.token)).status).toBe(404);
      expect((await fetch(`${h.url}/api/voice/share-session/${share.token}/stop`, { method: 'POST' })).status).toBe(404);
    } finally {
      offset = 0;
    }
  });

  it('refuse lifetimes outside 2-30 minutes, sessions that are gone or not running, and junk tokens', async () => {
    const { id, apiKey, projectId } = await readySession(h);
    expect((await create(id, { ttlMinutes: 31 })).status).toBe(400);
    expect((await create(id, { ttlMinutes: 1 })).status).toBe(400);
    expect((await create('no-such-session')).status).toBe(404);
    await fetch(`${h.url}/v1/sessions/${id}`, { method: 'POST', headers: { ...json, 'x-svc-api-key': apiKey }, body: JSON.stringify({ projectId, status: 'REQUEST_RELEASE' }) });
    expect((await create(id)).status).toBe(409);
    expect((await fetch(`${h.url}/share/not-a-token`)).status).toBe(404);
    expect((await fetch(`${h.url}/share/${'A'.repeat(24)}`)).status).toBe(404);
  });

  it('end when their session ends', async () => {
    const { id, apiKey, projectId } = await readySession(h);
    const { token } = (await (await create(id)).json()) as { token: string };
    expect((await fetch(`${h.url}/share/${token}`)).status).toBe(200);
    await fetch(`${h.url}/v1/sessions/${id}`, { method: 'POST', headers: { ...json, 'x-svc-api-key': apiKey }, body: JSON.stringify({ projectId, status: 'REQUEST_RELEASE' }) });
    await waitFor(async () => (await fetch(`${h.url}/share/${token}`)).status === 404, { what: 'the share to end with its session' });
  });

  it('are at most 240 active at once', async () => {
    const { id } = await readySession(h);
    const statuses: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      statuses.push(...(await Promise.all(Array.from({ length: 50 }, () => create(id).then((r) => r.status)))));
    }
    const created = statuses.filter((s) => s === 201).length;
    expect(statuses.filter((s) => s !== 201 && s !== 429)).toEqual([]);
    expect(created).toBeLessThanOrEqual(240);
    const over = await create(id);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { message: string }).message).toMatch(/at most 240 shares/);
  });
});
