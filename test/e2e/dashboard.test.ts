// The dashboard in a real Chromium (playwright-core, Debian's chromium) against a real control
// plane with the local scheduler and real browser sessions made through the Browserbase SDK.
// Screenshots of every page go to test/e2e/screenshots/.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Browserbase from '@browserbasehq/sdk';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_DIST } from '../../server/web.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { ensureSettingsRow } from '../harness/settingsRow.ts';
import { waitFor } from '../harness/waitFor.ts';

const TOKEN = 'e2e-dashboard-token-0123456789';
const operator = { 'x-dashboard-token': TOKEN };
const SHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let bb: Browserbase;
let projectId: string;

const shot = (name: string, p: Page = page, fullPage = true) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });

beforeAll(async () => {
  // `npm ci` builds the dashboard (postinstall); a tree without the build gets one now.
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) execFileSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'ignore' });
  fs.mkdirSync(SHOTS, { recursive: true });
  await ensureSettingsRow();
  [h, browser] = await Promise.all([
    startHarness({ env: { DASHBOARD_TOKEN: TOKEN, POOL_SIZE: '0', AGENT_IDLE_GRACE_MS: '60000' } }),
    chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] }),
  ]);
  const p = await h.project({ concurrency: 10 });
  projectId = p.projectId;
  await h.deps.db.project.update({ where: { id: projectId }, data: { name: 'checkout-crawler' } });
  bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

const row = (id: string) => page.locator(`[data-session-id="${id}"]`);

describe('the dashboard', () => {
  it('asks for the dashboard token, then opens on the sessions page', async () => {
    await page.goto(h.url);
    await page.locator('input[type=password]').fill(TOKEN);
    await shot('login');
    await page.locator('button').click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await page.locator('[data-testid="live-state"] [data-status="live"]').waitFor();
  });

  it('shows a session made through the SDK within 2 s, and its status changes live on release', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true, userMetadata: { userId: 'u-42', jobBoard: 'acme' } });
    await row(s.id).waitFor({ timeout: 2_000 });
    await page.locator(`[data-session-id="${s.id}"][data-status="RUNNING"]`).waitFor({ timeout: 2_000 });
    await expect(row(s.id).textContent()).resolves.toContain('userId: u-42');
    await shot('sessions');

    await bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' });
    await page.locator(`[data-session-id="${s.id}"][data-status="COMPLETED"]`).waitFor({ timeout: 2_000 });
  });

  it('releases a session from the list', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true, userMetadata: { userId: 'u-43' } });
    await row(s.id).locator('[data-testid="release"]').click({ timeout: 2_000 });
    await page.locator(`[data-session-id="${s.id}"][data-status="COMPLETED"]`).waitFor({ timeout: 3_000 });
    expect((await bb.sessions.retrieve(s.id)).status).toBe('COMPLETED');
  });

  it('shows a session page with its timeline, metadata and a live view with frames; Release ends it', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true, userMetadata: { userId: 'u-44', keywords: 'live view' }, browserSettings: { viewport: { width: 1280, height: 800 } } });
    const cdp = await chromium.connectOverCDP(s.connectUrl!);
    const tab = cdp.contexts()[0]!.pages()[0] ?? (await cdp.contexts()[0]!.newPage());
    await tab.setContent('<body style="margin:0;font:32px system-ui;background:linear-gradient(135deg,#1f5683,#163c5c);color:#fff;display:flex;align-items:center;justify-content:center;height:100vh"><div><h1 style="margin:0 0 12px">Checkout</h1><p style="font-size:20px;opacity:.8">Step 2 of 3: shipping address</p></div></body>');

    await row(s.id).locator('a').click({ timeout: 2_000 });
    await page.locator('[data-testid="timeline"] li').nth(2).waitFor();
    expect(await page.locator('[data-testid="timeline"]').textContent()).toMatch(/CREATING.*PROVISIONING.*READY/);
    expect(await page.locator('pre.json').first().textContent()).toContain('"userId": "u-44"');
    await waitFor(async () => Number(await page.locator('[data-testid="live-frame"]').getAttribute('data-frames')) >= 1, { timeoutMs: 5_000, what: 'a live-view frame' });
    await page.locator('.live-view[data-state="live"]').waitFor();
    await shot('session');
    await cdp.close();

    await page.locator('[data-testid="release-session"]').click();
    await page.locator('h1 [data-status="COMPLETED"]').waitFor({ timeout: 3_000 });
    await page.locator('[data-testid="timeline"]').getByText('RELEASED').waitFor();
    expect((await bb.sessions.retrieve(s.id)).status).toBe('COMPLETED');
  });

  it('shows projects with usage over time, and nodes with capacity', async () => {
    await page.getByRole('link', { name: 'Projects' }).click();
    const card = page.locator('.project', { hasText: 'checkout-crawler' });
    await card.locator('figure.chart').waitFor();
    // This hour's bar shows the minutes of the sessions above; the hours before are empty.
    const heights = await card.locator('svg .bar').evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('height'))));
    expect(heights).toHaveLength(24);
    expect(heights[23]).toBeGreaterThan(0);
    expect(heights.slice(0, 22).every((v) => v === 0)).toBe(true);
    await shot('projects');
    await page.getByRole('link', { name: 'Nodes' }).click();
    await page.locator('[data-testid="nodes"] .card').first().waitFor();
    expect(await page.locator('[data-testid="nodes"]').textContent()).toContain('browsers');
    await shot('nodes');
  });

  it('keeps a draft when someone else saves the settings, warns, and saves only once resolved', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    const name = page.locator('[data-path="identity.displayName"]');
    await name.waitFor();
    await expect(page.locator('[data-testid="public-https-host"]').textContent()).resolves.toBe('not exposed');
    await name.fill('Caravan staging');
    const save = page.locator('[data-testid="save-settings"]');
    expect(await save.isEnabled()).toBe(true);

    // Another client saves meanwhile.
    const current = (await (await fetch(`${h.url}/api/settings`, { headers: operator })).json()) as { intent: Record<string, unknown>; _meta: { updatedAt: string } };
    const put = await fetch(`${h.url}/api/settings`, {
      method: 'PUT', headers: { ...operator, 'content-type': 'application/json' },
      body: JSON.stringify({ ...current.intent, persona: { tone: 'friendly' }, _meta: { expectedUpdatedAt: current._meta.updatedAt } }),
    });
    expect(put.status).toBe(200);
    await page.locator('[data-testid="settings-conflict"]').waitFor({ timeout: 5_000 });
    expect(await name.inputValue()).toBe('Caravan staging');
    expect(await save.isDisabled()).toBe(true);
    await shot('settings-conflict', page, false);

    // Making the draft equal the new snapshot resolves it; nothing is left to save.
    await name.fill('Caravan');
    await page.locator('[data-path="persona.tone"]').selectOption('friendly');
    await page.locator('[data-testid="settings-conflict"]').waitFor({ state: 'detached' });
    expect(await save.isDisabled()).toBe(true);

    // Another conflict, resolved by discarding the draft.
    await name.fill('Caravan staging');
    const again = (await (await fetch(`${h.url}/api/settings`, { headers: operator })).json()) as { intent: Record<string, unknown>; _meta: { updatedAt: string } };
    await fetch(`${h.url}/api/settings`, {
      method: 'PUT', headers: { ...operator, 'content-type': 'application/json' },
      body: JSON.stringify({ ...again.intent, persona: { tone: 'concise' }, _meta: { expectedUpdatedAt: again._meta.updatedAt } }),
    });
    await page.locator('[data-testid="settings-conflict"]').waitFor();
    expect(await save.isDisabled()).toBe(true);
    await page.locator('[data-testid="discard-conflict"]').click();
    await page.locator('[data-testid="settings-conflict"]').waitFor({ state: 'detached' });
    expect(await name.inputValue()).toBe('Caravan');
    expect(await page.locator('[data-path="persona.tone"]').inputValue()).toBe('concise');

    // Now a save goes through, as the full snapshot against the current version.
    await name.fill('Caravan staging');
    await save.click();
    await page.getByText('Saved and applied').waitFor();
    const saved = (await (await fetch(`${h.url}/api/settings`, { headers: operator })).json()) as { intent: { identity?: { displayName?: string }; persona?: { tone?: string } } };
    expect(saved.intent.identity?.displayName).toBe('Caravan staging');
    expect(saved.intent.persona?.tone).toBe('concise');
    await shot('settings');
  });

  it('asks for the token again in the app when the session has ended, and goes on where it was', async () => {
    await context.clearCookies();
    await page.getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('heading', { name: 'Log in to the dashboard' }).waitFor();
    await page.locator('input[type=password]').fill('not-the-token-0123456789');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('That is not the dashboard token').waitFor();
    await shot('login-expired');
    await page.locator('input[type=password]').fill(TOKEN);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
  });

  it('reads well on a phone', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(h.url);
    await phone.locator('[data-testid="sessions"]').waitFor();
    await shot('sessions-phone', phone);
    await phone.close();
  });
});
