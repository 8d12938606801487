// The launcher end to end: real Chromium, a real agent, and a stand-in control plane recording reports.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium as playwright } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../agent/agent.ts';
import { parseLauncherEnv } from '../../agent/config.ts';
import { cdpCommands } from '../../agent/launcher/chromium.ts';
import { runLauncher } from '../../agent/launcher/launcher.ts';
import { isTmpfsWithRoom, SHM_DIR } from '../../agent/launcher/profileRoot.ts';
import { SessionReport, type BrowserInfo, type SessionAssignment } from '../../schema/agent.ts';
import { REPORT_SESSION } from '../../schema/graphql-ops.ts';
import { cdpCommand, isAlive, mintCdpToken, mintLauncherToken, secrets, signalSink, tempDir, testLog, waitFor } from './helpers.ts';

interface Recorded {
  auth: string | undefined;
  query: string;
  report: SessionReport;
}

/** A stand-in control plane: accepts reportSession and records it. */
async function standInControlPlane(): Promise<{ url: string; reports: Recorded[]; close(): Promise<void> }> {
  const reports: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { query: string; variables: { input: unknown } };
      reports.push({ auth: req.headers.authorization, query: body.query, report: SessionReport.parse(body.variables.input) });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ data: { reportSession: true } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  return {
    url: `http://127.0.0.1:${a && typeof a === 'object' ? a.port : 0}`,
    reports,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe('launcher', { timeout: 30_000 }, () => {
  let agent: Agent;
  let cp: Awaited<ReturnType<typeof standInControlPlane>>;
  let workDir: string;
  const statuses = (sessionId: string) => cp.reports.filter((r) => r.report.sessionId === sessionId).map((r) => r.report.status);

  const env = async (sessionId: string, extra: Record<string, string> = {}) => ({
    CARAVAN_SESSION_ID: sessionId,
    CARAVAN_LAUNCHER_TOKEN: await mintLauncherToken(sessionId),
    CARAVAN_CONTROL_URL: cp.url,
    CARAVAN_AGENT_URL: agent.address().controlUrl,
    CARAVAN_NODE_ID: 'node-l',
    CARAVAN_WORK_DIR: workDir,
    CARAVAN_VIEWPORT: '1024x700',
    ...extra,
  });

  beforeAll(async () => {
    workDir = await tempDir('caravan-launcher-');
    cp = await standInControlPlane();
    agent = createAgent({
      nodeId: 'node-l', publicHost: '127.0.0.1', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/nonexistent', idleGraceMs: 60_000, secrets, signals: signalSink().signals, log: testLog(),
    });
    await agent.start();
  });

  afterAll(async () => {
    await agent?.stop();
    await cp?.close();
    await fs.rm(workDir, { recursive: true, force: true });
  });

  it('reports READY with the browser port, serves it through the proxy, and on stop closes it and reports STOPPED', async () => {
    const sessionId = 'sess_launch_ok';
    const config = parseLauncherEnv(await env(sessionId));
    const t0 = performance.now();
    const handle = runLauncher(config, { log: testLog() });
    const info = await handle.ready;
    const readyMs = Math.round(performance.now() - t0);
    console.info(`launcher start-to-READY: ${readyMs} ms (launcher's own count ${info.readyMs} ms)`);

    const ready = cp.reports.find((r) => r.report.sessionId === sessionId);
    expect(ready?.query).toBe(REPORT_SESSION);
    expect(ready?.auth).toBe(`Bearer ${config.launcherToken}`);
    expect(ready?.report).toMatchObject({ status: 'READY', nodeId: 'node-l', browser: { port: info.port, wsPath: info.wsPath } });
    expect(ready?.report.browser?.version).toMatch(/Chrome/);
    expect(agent.routes.get(sessionId)).toMatchObject({ browserPort: info.port, browserPid: info.pid, keepAlive: false });

    const token = await mintCdpToken({ sessionId });
    const version = await cdpCommand(`ws://127.0.0.1:${agent.address().cdpPort}?signingKey=${token}`, 'Browser.getVersion');
    expect(String(version.product)).toMatch(/Chrome/);

    const ts = performance.now();
    expect(await handle.stop('SIGTERM')).toBe(0);
    console.info(`launcher stop: ${Math.round(performance.now() - ts)} ms`);
    expect(isAlive(info.pid)).toBe(false);
    expect(statuses(sessionId)).toEqual(['READY', 'STOPPED']);
    expect(agent.routes.get(sessionId)).toBeUndefined();
    await expect(fs.stat(info.userDataDir)).rejects.toThrow(/ENOENT/);
  });

  it('reports FAILED when Chromium dies on its own, and removes the route', async () => {
    const sessionId = 'sess_launch_killed';
    const handle = runLauncher(parseLauncherEnv(await env(sessionId, { CARAVAN_KEEP_ALIVE: 'true' })), { log: testLog() });
    const info = await handle.ready;
    expect(agent.routes.get(sessionId)?.keepAlive).toBe(true);
    process.kill(info.pid, 'SIGKILL');
    expect(await handle.done).toBe(1);
    expect(statuses(sessionId)).toEqual(['READY', 'FAILED']);
    const failed = cp.reports.find((r) => r.report.sessionId === sessionId && r.report.status === 'FAILED');
    expect(failed?.report.message).toMatch(/browser exited unexpectedly \(signal SIGKILL\)/);
    expect(agent.routes.get(sessionId)).toBeUndefined();
  });

  it('reports FAILED when Chromium cannot be started', async () => {
    const sessionId = 'sess_launch_nochrome';
    const handle = runLauncher(parseLauncherEnv(await env(sessionId, { CHROME_PATH: '/nonexistent/chromium' })), { log: testLog() });
    await expect(handle.ready).rejects.toThrow(/could not be started/);
    expect(await handle.done).toBe(1);
    expect(statuses(sessionId)).toEqual(['FAILED']);
  });

  it('with CARAVAN_PROFILE_DIR keeps the profile there and the HTTP and code caches in the work dir, and removes both on stop', async () => {
    const sessionId = 'sess_launch_profile_dir';
    const profileDir = await fs.mkdtemp(path.join((await isTmpfsWithRoom(SHM_DIR)) ? SHM_DIR : os.tmpdir(), 'caravan-test-profiles-'));
    const pages = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': req.url === '/app.js' ? 'text/javascript' : 'text/html', 'Cache-Control': 'max-age=3600' });
      res.end(req.url === '/app.js' ? 'document.title = "cached";' : '<!doctype html><script src="/app.js"></script><p>hi</p>');
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    try {
      const handle = runLauncher(parseLauncherEnv(await env(sessionId, { CARAVAN_PROFILE_DIR: profileDir })), { log: testLog() });
      const info = await handle.ready;
      expect(path.dirname(info.userDataDir)).toBe(profileDir);
      const cacheName = (await fs.readdir(workDir)).find((d) => d.startsWith(`caravan-${sessionId}-cache-`));
      expect(cacheName).toBeDefined();
      const cacheDir = path.join(workDir, cacheName!);

      const browser = await playwright.connectOverCDP(`http://127.0.0.1:${info.port}`);
      const page = browser.contexts()[0]!.pages()[0]!;
      await page.goto(`http://127.0.0.1:${(pages.address() as { port: number }).port}/`);
      expect(await page.title()).toBe('cached');
      await browser.close();
      // The page's responses were cached in the work dir, not in the profile.
      await waitFor(async () => (await fs.readdir(path.join(cacheDir, 'Default', 'Cache', 'Cache_Data')).catch(() => [])).length > 0, 10_000, 'HTTP cache entries in the work dir');
      await expect(fs.stat(path.join(info.userDataDir, 'Default', 'Cache'))).rejects.toThrow(/ENOENT/);
      expect((await fs.readdir(path.join(info.userDataDir, 'Default'))).length).toBeGreaterThan(0);

      expect(await handle.stop('SIGTERM')).toBe(0);
      await expect(fs.stat(info.userDataDir)).rejects.toThrow(/ENOENT/);
      await expect(fs.stat(cacheDir)).rejects.toThrow(/ENOENT/);
    } finally {
      pages.closeAllConnections();
      pages.close();
      await fs.rm(profileDir, { recursive: true, force: true });
    }
  });

  it('stops cleanly when asked to stop before the browser is ready', async () => {
    const sessionId = 'sess_launch_early_stop';
    const handle = runLauncher(parseLauncherEnv(await env(sessionId)), { log: testLog() });
    expect(await handle.stop('SIGTERM')).toBe(0);
    await expect(handle.ready).rejects.toThrow(/stopped before ready/);
    expect(statuses(sessionId)).toEqual(['STOPPED']);
    expect(agent.routes.get(sessionId)).toBeUndefined();
    expect((await fs.readdir(workDir)).filter((d) => d.includes(sessionId))).toEqual([]);
  });

  it('on standby starts nothing until assigned, then starts the browser with the assignment and hands READY to the scheduler', async () => {
    const sessionId = 'sess_launch_standby';
    const standbyEnv = { ...(await env('unused')), CARAVAN_STANDBY: 'true', CARAVAN_SESSION_ID: '', CARAVAN_LAUNCHER_TOKEN: '', CARAVAN_VIEWPORT: '' };
    let assign: (a: SessionAssignment) => void = () => undefined;
    const assignment = new Promise<SessionAssignment>((r) => {
      assign = r;
    });
    let standby = false;
    const readies: Array<{ sessionId: string; browser: BrowserInfo }> = [];
    const handle = runLauncher(parseLauncherEnv(standbyEnv), {
      log: testLog(),
      assignment,
      onStandby: () => {
        standby = true;
      },
      reportReady: async (id, browser) => {
        readies.push({ sessionId: id, browser });
        return true;
      },
    });
    await waitFor(() => standby, 10_000, 'the launcher on standby');
    const dir = (await fs.readdir(workDir)).find((d) => d.startsWith('caravan-standby-'));
    expect(dir).toBeDefined();
    expect(await fs.readdir(path.join(workDir, dir!))).toEqual([]);

    assign({ type: 'assign', sessionId, launcherToken: await mintLauncherToken(sessionId), keepAlive: false, viewport: { width: 800, height: 600 } });
    const info = await handle.ready;
    expect(readies).toEqual([{ sessionId, browser: { port: info.port, wsPath: info.wsPath, version: info.version, pid: info.pid, userDataDir: info.userDataDir } }]);
    // READY went to the scheduler: nothing was reported over GraphQL, no route was registered here.
    expect(statuses(sessionId)).toEqual([]);
    // The assignment's viewport, not the default, sized the window.
    const [, win] = await cdpCommands(info.port, info.wsPath, [
      () => ({ method: 'Target.getTargets' }),
      (prev) => ({ method: 'Browser.getWindowForTarget', params: { targetId: (prev as { targetInfos: Array<{ targetId: string; type: string }> }).targetInfos.find((t) => t.type === 'page')?.targetId } }),
    ]);
    expect((win as { bounds: { width: number; height: number } }).bounds).toMatchObject({ width: 800, height: 600 });
    expect(await handle.stop('SIGTERM')).toBe(0);
    expect(isAlive(info.pid)).toBe(false);
    expect(statuses(sessionId)).toEqual(['STOPPED']);
  });

  it('on standby, a stop exits cleanly without starting a browser or reporting anything', async () => {
    const standbyEnv = { ...(await env('unused')), CARAVAN_STANDBY: 'true', CARAVAN_SESSION_ID: '', CARAVAN_LAUNCHER_TOKEN: '' };
    let standby = false;
    const before = cp.reports.length;
    const handle = runLauncher(parseLauncherEnv(standbyEnv), { log: testLog(), assignment: new Promise<never>(() => undefined), onStandby: () => { standby = true; } });
    await waitFor(() => standby, 10_000, 'the launcher on standby');
    expect(await handle.stop('SIGTERM')).toBe(0);
    await expect(handle.ready).rejects.toThrow(/stopped/);
    expect(cp.reports.length).toBe(before);
    expect((await fs.readdir(workDir)).filter((d) => d.startsWith('caravan-standby-'))).toEqual([]);
  });

  it('runs as a process: READY, then SIGTERM -> STOPPED and exit code 0', async () => {
    const sessionId = 'sess_launch_process';
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('agent/launcher/main.ts')], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), LOG_LEVEL: 'warn', ...(await env(sessionId)) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await waitFor(() => statuses(sessionId).includes('READY'), 15_000, 'READY from the launcher process');
    const port = cp.reports.find((r) => r.report.sessionId === sessionId)?.report.browser?.port;
    expect(agent.routes.get(sessionId)?.browserPort).toBe(port);
    const pid = agent.routes.get(sessionId)?.browserPid ?? 0;
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(statuses(sessionId)).toEqual(['READY', 'STOPPED']);
    expect(isAlive(pid)).toBe(false);
    expect(agent.routes.get(sessionId)).toBeUndefined();
  });

  it('stops when stdin ends if CARAVAN_WATCH_STDIN=true', async () => {
    const sessionId = 'sess_launch_stdin';
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('agent/launcher/main.ts')], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), LOG_LEVEL: 'warn', CARAVAN_WATCH_STDIN: 'true', ...(await env(sessionId)) },
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await waitFor(() => statuses(sessionId).includes('READY'), 15_000, 'READY from the launcher process');
    child.stdin?.end();
    expect(await exited).toBe(0);
    expect(statuses(sessionId)).toEqual(['READY', 'STOPPED']);
  });
});
