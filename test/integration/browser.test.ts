// Real Chromium through connectUrl: Playwright, Puppeteer and Selenium drive a session's
// browser through the authenticated proxy; release, crashes and idling end it cleanly.
import Browserbase from '@browserbasehq/sdk';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { Builder } from 'selenium-webdriver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePages, type Pages } from '../harness/pages.ts';
import { browserPids, launcherPid } from '../harness/processes.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { waitFor } from '../harness/waitFor.ts';

let h: Harness;
let pages: Pages;
let bb: Browserbase;
let projectId: string;
let apiKey: string;

beforeAll(async () => {
  [h, pages] = await Promise.all([startHarness({ env: { AGENT_IDLE_GRACE_MS: '800', NODE_CAPACITY: '16' } }), servePages()]);
  const p = await h.project({ concurrency: 20 });
  projectId = p.projectId;
  apiKey = p.apiKey;
  bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
});
afterAll(async () => {
  await h?.stop();
  await pages?.close();
});

const release = (id: string) => bb.sessions.update(id, { projectId, status: 'REQUEST_RELEASE' });

describe('a real browser behind connectUrl', () => {
  it('is driven by playwright-core connectOverCDP', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const browser = await chromium.connectOverCDP(s.connectUrl!);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${pages.url}?name=Playwright+here`);
    expect(await page.title()).toBe('Playwright here');
    expect(await page.evaluate(() => (window as unknown as { answer: number }).answer)).toBe(42);
    await browser.close();
    await release(s.id);
  });

  it('is driven by puppeteer-core connect', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const browser = await puppeteer.connect({ browserWSEndpoint: s.connectUrl!, defaultViewport: null });
    const page = await browser.newPage();
    await page.goto(`${pages.url}?name=Puppeteer+here`);
    expect(await page.title()).toBe('Puppeteer here');
    expect(await page.evaluate('document.getElementById("h").textContent')).toBe('hello');
    await browser.disconnect();
    await release(s.id);
  });

  it('is driven by selenium-webdriver through seleniumRemoteUrl', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    expect(s.seleniumRemoteUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.+\/wd\/hub$/);
    const driver = await new Builder().usingServer(s.seleniumRemoteUrl!).forBrowser('chrome').build();
    try {
      await driver.get(`${pages.url}?name=Selenium+here`);
      expect(await driver.getTitle()).toBe('Selenium here');
    } finally {
      await driver.quit();
    }
    await release(s.id);
  });

  it('applies the requested viewport', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { viewport: { width: 1024, height: 640 } } });
    const browser = await chromium.connectOverCDP(s.connectUrl!);
    const page = browser.contexts()[0]!.pages()[0] ?? (await browser.contexts()[0]!.newPage());
    expect(await page.evaluate(() => window.outerWidth)).toBe(1024);
    await browser.close();
    await release(s.id);
  });

  it('lists the real pages in the debug URLs, routed through the proxy', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const browser = await chromium.connectOverCDP(s.connectUrl!);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${pages.url}?name=Debug+me`);
    const debug = await bb.sessions.debug(s.id);
    const entry = debug.pages.find((p) => p.title === 'Debug me');
    expect(entry).toBeDefined();
    expect(entry!.url).toContain(pages.url);
    const port = new URL(s.connectUrl!).port;
    expect((entry as unknown as { wsUrl: string }).wsUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${port}/devtools/page/`));
    expect(entry!.debuggerUrl).toContain(encodeURIComponent(`127.0.0.1:${port}/devtools/page/`));
    await browser.close();
    await release(s.id);
  });
});

describe('ending a session leaves nothing behind', () => {
  it('release: the Chromium process is gone within 5 s', async () => {
    const s = await bb.sessions.create({ projectId });
    expect((await browserPids(h.deps.db, s.id)).length).toBeGreaterThan(0);
    const t0 = Date.now();
    await release(s.id);
    await waitFor(async () => (await browserPids(h.deps.db, s.id)).length === 0, { timeoutMs: 5000, what: 'browser exit' });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await bb.sessions.retrieve(s.id)).status).toBe('COMPLETED');
  });

  it('kill -9 of the launcher ends the session in ERROR and takes the browser with it', async () => {
    const s = await bb.sessions.create({ projectId });
    const pid = await waitFor(() => launcherPid(h.deps.db, s.id), { what: 'launcher pid' });
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => (await bb.sessions.retrieve(s.id)).status === 'ERROR', { what: 'ERROR status' });
    await waitFor(async () => (await browserPids(h.deps.db, s.id)).length === 0, { timeoutMs: 5000, what: 'browser exit' });
  });

  it('a browser crash ends the session in ERROR', async () => {
    const s = await bb.sessions.create({ projectId });
    const [main] = (await browserPids(h.deps.db, s.id)).sort((a, b) => a - b);
    process.kill(main!, 'SIGKILL');
    await waitFor(async () => (await bb.sessions.retrieve(s.id)).status === 'ERROR', { what: 'ERROR status' });
  });
});

describe('keepAlive', () => {
  it('without keepAlive, a session whose clients left and did not come back ends COMPLETED', async () => {
    const s = await bb.sessions.create({ projectId });
    const first = await chromium.connectOverCDP(s.connectUrl!);
    await first.close();
    // Reconnecting within the grace period keeps it alive.
    const again = await chromium.connectOverCDP(s.connectUrl!);
    expect(again.isConnected()).toBe(true);
    expect((await bb.sessions.retrieve(s.id)).status).toBe('RUNNING');
    await again.close();
    await waitFor(async () => (await bb.sessions.retrieve(s.id)).status === 'COMPLETED', { what: 'idle end' });
    await waitFor(async () => (await browserPids(h.deps.db, s.id)).length === 0, { what: 'browser exit' });
  });

  it('with keepAlive, the session outlives its clients and can be reconnected', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const first = await chromium.connectOverCDP(s.connectUrl!);
    const page = await first.contexts()[0]!.newPage();
    await page.goto(`${pages.url}?name=Kept`);
    await first.close();
    // Three grace periods pass with no client (the absence of an end cannot be awaited).
    await new Promise((r) => setTimeout(r, 2400));
    expect((await bb.sessions.retrieve(s.id)).status).toBe('RUNNING');
    const again = await chromium.connectOverCDP((await bb.sessions.retrieve(s.id)).connectUrl!);
    const titles = await Promise.all(again.contexts().flatMap((c) => c.pages()).map((p) => p.title()));
    expect(titles).toContain('Kept');
    await again.close();
    await release(s.id);
  });
});

describe('ten sessions at once', () => {
  it('each is driven in parallel by its own client, and usage counts bytes and minutes', async () => {
    const p = await h.project({ concurrency: 10 });
    const bb10 = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
    const results = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const s = await bb10.sessions.create({ projectId: p.projectId, keepAlive: true });
        const browser = await chromium.connectOverCDP(s.connectUrl!);
        const page = await browser.contexts()[0]!.newPage();
        await page.goto(`${pages.url}?name=Tab+${i}`);
        const title = await page.title();
        await browser.close();
        await bb10.sessions.update(s.id, { projectId: p.projectId, status: 'REQUEST_RELEASE' });
        return title;
      }),
    );
    expect(results.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `Tab ${i}`).sort());
    const usage = await waitFor(async () => {
      const u = (await bb10.projects.usage(p.projectId)) as unknown as { browserMinutes: number; proxyBytes: number };
      return u.proxyBytes > 0 && u.browserMinutes > 0 ? u : undefined;
    }, { what: 'usage' });
    expect(usage.proxyBytes).toBeGreaterThan(10 * 1000);
  });
});

describe('direct mode and node capacity', () => {
  it('drives the browser through the URL and token from POST /sessions/{id}/cdp-url', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const res = await fetch(`${h.url}/sessions/${s.id}/cdp-url`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey }, body: JSON.stringify({ expiresIn: 120 }) });
    const { data } = (await res.json()) as { data: { cdpUrl: string; signingKey: string } };
    const browser = await chromium.connectOverCDP(`${data.cdpUrl}?signingKey=${data.signingKey}`);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${pages.url}?name=Direct+mode`);
    expect(await page.title()).toBe('Direct mode');
    await browser.close();
    await release(s.id);
  });

  it('answers 503 with a clear message instead of starting a browser past the node capacity', async () => {
    const small = await startHarness({ env: { NODE_CAPACITY: '1', POOL_SIZE: '0' } });
    try {
      const p = await small.project({ concurrency: 5 });
      const bbSmall = new Browserbase({ apiKey: 'unused', baseURL: small.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
      const first = await bbSmall.sessions.create({ projectId: p.projectId, keepAlive: true });
      const second = await bbSmall.sessions.create({ projectId: p.projectId }).catch((e: unknown) => e as { status?: number; message?: string });
      expect(second).toMatchObject({ status: 503 });
      expect((second as { message: string }).message).toMatch(/capacity of 1 browsers/);
      await bbSmall.sessions.update(first.id, { projectId: p.projectId, status: 'REQUEST_RELEASE' });
    } finally {
      await small.stop();
    }
  });
});
