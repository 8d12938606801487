// Live-view sharing with a real Chromium: the local node agent screencasts the session's page to
// the share's frame route, and a share-page viewer receives the frames.
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../harness/server.ts';
import { servePages, type Pages } from '../harness/pages.ts';
import { readySession } from './harness.ts';
import { openSse } from './sse.ts';

let h: Harness;
let pages: Pages;

beforeAll(async () => {
  [h, pages] = await Promise.all([startHarness({ env: { POOL_SIZE: '0', AGENT_IDLE_GRACE_MS: '60000' } }), servePages()]);
});
afterAll(async () => {
  await h?.stop();
  await pages?.close();
});

const isJpeg = (b64: string) => {
  const b = Buffer.from(b64, 'base64');
  return b.length > 100 && b[0] === 0xff && b[1] === 0xd8;
};

describe('a live-view share of a running browser', () => {
  it('streams the session page to the share page within 2 s, and ends on stop', async () => {
    const { id: sessionId, connectUrl } = await readySession(h);

    const created = await fetch(`${h.url}/api/sessions/${sessionId}/share`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ttlMinutes":3}' });
    expect(created.status).toBe(201);
    const share = (await created.json()) as { token: string; url: string; expiresAt: string };
    expect(share.token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(share.url).toBe(`/share/${share.token}`);
    const ttl = Date.parse(share.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(2.5 * 60_000);
    expect(ttl).toBeLessThanOrEqual(3 * 60_000);

    const page = await fetch(`${h.url}${share.url}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('/frames');

    const started = Date.now();
    const viewer = await openSse(`${h.url}${share.url}/frames`);
    expect(viewer.status).toBe(200);
    const frame = await viewer.waitFor((e) => e.event === 'frame', 2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(isJpeg(frame.data)).toBe(true);

    // A page the client opens becomes the one on screen.
    const browser = await chromium.connectOverCDP(connectUrl);
    const tab = await browser.contexts()[0]!.newPage();
    const before = viewer.events.length;
    await tab.goto(`${pages.url}?name=Shared`);
    await tab.evaluate(() => { document.body.style.background = '#3a7'; });
    const later = await viewer.waitFor((e) => e.event === 'frame' && viewer.events.indexOf(e) >= before, 5_000);
    expect(isJpeg(later.data)).toBe(true);
    expect(later.data).not.toBe(frame.data);
    await browser.close();

    const stop = await fetch(`${h.url}/api/voice/share-session/${share.token}/stop`, { method: 'POST' });
    expect(stop.status).toBe(200);
    expect(JSON.parse((await viewer.waitFor((e) => e.event === 'end')).data)).toEqual({ reason: 'stopped' });
    viewer.close();
    expect((await fetch(`${h.url}${share.url}`)).status).toBe(404);
    expect((await fetch(`${h.url}/api/voice/share-session/${share.token}/frame`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: Buffer.from([0xff, 0xd8, 0xff, 0xd9]) })).status).toBe(404);
  });
});
