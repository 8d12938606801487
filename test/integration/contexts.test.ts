// Contexts end to end, with real Chromium and a real S3-protocol server: a persisted profile
// carries cookies and localStorage to the next session; client uploads, expiry, corruption and
// the persist lock. The suite runs against the embedded store and a separately started one.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Browserbase from '@browserbasehq/sdk';
import { chromium } from 'playwright-core';
import S3rver from 's3rver';
import * as tar from 'tar';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../agent/launcher/chromium.ts';
import { servePages, type Pages } from '../harness/pages.ts';
import { startHarness, type Harness } from '../harness/server.ts';

let pages: Pages;
beforeAll(async () => { pages = await servePages(); });
afterAll(() => pages?.close());

interface Store { name: string; env(): Promise<Record<string, string>>; stop(): Promise<void> }

const embedded: Store = { name: 'the embedded store', env: async () => ({}), stop: async () => undefined };
const external = (): Store => {
  let server: S3rver | undefined;
  let dir = '';
  return {
    name: 'a separate S3 server addressed by S3_* settings',
    async env() {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-s3-'));
      server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'ext-contexts' }] });
      const { port } = await server.run();
      // The standard AWS credential chain reads these.
      process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
      process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
      return { S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_BUCKET: 'ext-contexts', S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: 'true' };
    },
    async stop() {
      await server?.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
};

/** Builds a profile the way a client would: its own Chromium, a cookie, a clean close, tar.gz. */
async function clientProfile(cookieValue: string): Promise<Blob> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-client-profile-'));
  const browser = await launchChromium({ chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', userDataDir: dir, log: pino({ level: 'silent' }) });
  const b = await chromium.connectOverCDP(`http://127.0.0.1:${browser.port}`);
  await b.contexts()[0]!.addCookies([{ name: 'uploaded', value: cookieValue, url: pages.url, expires: Math.floor(Date.now() / 1000) + 3600 }]);
  await b.close();
  await browser.close();
  const file = path.join(os.tmpdir(), `profile-${crypto.randomUUID()}.tar.gz`);
  await tar.c({ gzip: true, file, cwd: dir }, ['.']);
  const body = new Blob([await fs.readFile(file)]);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rm(file, { force: true });
  return body;
}

describe.each([embedded, external()])('contexts on $name', (store) => {
  let h: Harness;
  let bb: Browserbase;
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    h = await startHarness({ env: { ...(await store.env()), CONTEXT_UPLOAD_WINDOW: '2', AGENT_IDLE_GRACE_MS: '60000' } });
    const p = await h.project({ concurrency: 10 });
    projectId = p.projectId;
    apiKey = p.apiKey;
    bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
  });
  afterAll(async () => {
    await h?.stop();
    await store.stop();
  });

  const withPage = async (connectUrl: string, fn: (page: import('playwright-core').Page) => Promise<void>) => {
    const browser = await chromium.connectOverCDP(connectUrl);
    const ctx = browser.contexts()[0]!;
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${pages.url}?name=ctx`);
    await fn(page);
    await browser.close();
  };
  const release = (id: string) => bb.sessions.update(id, { projectId, status: 'REQUEST_RELEASE' });

  it('creates a context in the spec shape and retrieves its metadata', async () => {
    const ctx = await bb.contexts.create({ projectId });
    expect(ctx.id).toMatch(/^ctx_/);
    expect(ctx).toMatchObject({ cipherAlgorithm: 'NONE', initializationVectorSize: 0, publicKey: '' });
    expect(ctx.uploadUrl).toMatch(/^http/);
    const got = (await bb.contexts.retrieve(ctx.id)) as unknown as { id: string; projectId: string; createdAt: string; updatedAt: string };
    expect(got.projectId).toBe(projectId);
    expect(Date.parse(got.createdAt)).toBeGreaterThan(0);
  });

  it('a persisted session hands its cookies and localStorage to the next session', async () => {
    const ctx = await bb.contexts.create({ projectId });
    const before = (await bb.contexts.retrieve(ctx.id)) as unknown as { updatedAt: string };
    const a = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id, persist: true } } });
    await withPage(a.connectUrl!, async (page) => {
      await page.evaluate(() => {
        document.cookie = 'remember=me-123; max-age=3600; path=/';
        localStorage.setItem('token', 'ls-456');
      });
    });
    await release(a.id);
    const b = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id, persist: false } } });
    await withPage(b.connectUrl!, async (page) => {
      expect(await page.evaluate(() => document.cookie)).toContain('remember=me-123');
      expect(await page.evaluate(() => localStorage.getItem('token'))).toBe('ls-456');
    });
    await release(b.id);
    const after = (await bb.contexts.retrieve(ctx.id)) as unknown as { updatedAt: string };
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
  });

  it('a profile a client uploads with a plain HTTP PUT is the next session\'s profile', async () => {
    const profile = await clientProfile('from-client');
    const ctx = await bb.contexts.create({ projectId });
    const put = await fetch(ctx.uploadUrl, { method: 'PUT', body: profile });
    expect(put.status).toBe(200);
    const s = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id } } });
    await withPage(s.connectUrl!, async (page) => {
      expect(await page.evaluate(() => document.cookie)).toContain('uploaded=from-client');
    });
    await release(s.id);
  });

  it('refuses an upload after the URL expired', async () => {
    const ctx = await bb.contexts.create({ projectId });
    // The upload window is configured to 2 s here; presigned URLs expire by the wall clock.
    await new Promise((r) => setTimeout(r, 3100));
    const put = await fetch(ctx.uploadUrl, { method: 'PUT', body: 'late' });
    expect(put.status).toBe(403);
    const profile = await clientProfile('fresh');
    const fresh = await bb.contexts.update(ctx.id);
    expect((await fetch(fresh.uploadUrl, { method: 'PUT', body: profile })).status).toBe(200);
  });

  it('a corrupt upload fails that session with a message and keeps the previous profile', async () => {
    const profile = await clientProfile('good-one');
    const ctx = await bb.contexts.create({ projectId });
    expect((await fetch(ctx.uploadUrl, { method: 'PUT', body: profile })).status).toBe(200);
    const first = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id } } });
    await release(first.id);
    const again = await bb.contexts.update(ctx.id);
    expect((await fetch(again.uploadUrl, { method: 'PUT', body: new Blob([crypto.randomBytes(4096)]) })).status).toBe(200);
    const res = await fetch(`${h.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ projectId, browserSettings: { context: { id: ctx.id } } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { success: boolean; message: string };
    expect(body.success).toBe(false);
    expect(body.message).toMatch(/not gzip|corrupt/);
    const failedId = /session (sess_[0-9a-f-]+)/.exec(body.message)?.[1];
    expect(failedId).toBeDefined();
    expect((await bb.sessions.retrieve(failedId!)).status).toBe('ERROR');
    const next = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id } } });
    await withPage(next.connectUrl!, async (page) => {
      expect(await page.evaluate(() => document.cookie)).toContain('uploaded=good-one');
    });
    await release(next.id);
  });

  it('fails a session whose saved archive went missing from storage, with a message', async () => {
    const profile = await clientProfile('soon-gone');
    const ctx = await bb.contexts.create({ projectId });
    await fetch(ctx.uploadUrl, { method: 'PUT', body: profile });
    const first = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id } } });
    await release(first.id);
    await h.deps.store.delete(`${projectId}/${ctx.id}/profile.tar.gz`);
    const res = await fetch(`${h.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ projectId, browserSettings: { context: { id: ctx.id } } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/missing from object storage/);
  });

  it('allows one persisting session at a time, and readers beside it', async () => {
    const ctx = await bb.contexts.create({ projectId });
    const writer = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id, persist: true } } });
    const second = bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id, persist: true } } });
    await expect(second).rejects.toMatchObject({ status: 409 });
    const reader = await bb.sessions.create({ projectId, keepAlive: true, browserSettings: { context: { id: ctx.id, persist: false } } });
    expect(reader.status).toBe('RUNNING');
    await Promise.all([release(writer.id), release(reader.id)]);
  });

  it('answers 404 for a context of another project', async () => {
    const other = await h.project();
    const bbOther = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': other.apiKey } });
    const ctx = await bb.contexts.create({ projectId });
    await expect(bbOther.contexts.retrieve(ctx.id)).rejects.toMatchObject({ status: 404 });
    await expect(bbOther.sessions.create({ projectId: other.projectId, browserSettings: { context: { id: ctx.id } } })).rejects.toMatchObject({ status: 404 });
  });
});
