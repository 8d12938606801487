// The WebDriver relay with stock selenium-webdriver against a real Chromium and chromedriver.
import fs from 'node:fs/promises';
import { Builder, type WebDriver } from 'selenium-webdriver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../agent/agent.ts';
import { launchChromium, type Chromium } from '../../agent/launcher/chromium.ts';
import { attachCapabilities, parseRelayPath, seleniumRemoteUrl } from '../../agent/proxy/webdriver.ts';
import { mintCdpToken, secrets, signalSink, startPageServer, tamper, tempDir, testLog, waitFor } from './helpers.ts';

const SESSION = 'sess_wd';

describe('WebDriver relay', { timeout: 30_000 }, () => {
  let browser: Chromium;
  let agent: Agent;
  let page: Awaited<ReturnType<typeof startPageServer>>;
  let dir: string;
  const sink = signalSink();
  let port: number;

  beforeAll(async () => {
    dir = await tempDir();
    [browser, page] = await Promise.all([
      launchChromium({ chromePath: '/usr/bin/chromium', userDataDir: dir, log: testLog() }),
      startPageServer(),
    ]);
    agent = createAgent({
      nodeId: 'node-wd', publicHost: '127.0.0.1', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/usr/bin/chromedriver', idleGraceMs: 60_000, secrets, signals: sink.signals, log: testLog(),
    });
    await agent.start();
    port = agent.address().webdriverPort ?? 0;
    agent.routes.add({ sessionId: SESSION, browserPort: browser.port, browserWsPath: browser.wsPath, keepAlive: false });
  });

  afterAll(async () => {
    await agent?.stop();
    await browser?.close();
    await page?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('lets new Builder().usingServer(seleniumRemoteUrl) drive the session browser; quit() leaves it alive', async () => {
    expect(port).toBeGreaterThan(0);
    const token = await mintCdpToken({ sessionId: SESSION });
    const url = seleniumRemoteUrl('127.0.0.1', port, token);
    const driver: WebDriver = await new Builder().usingServer(url).forBrowser('chrome').build();
    let wdId: string;
    try {
      wdId = (await driver.getSession()).getId();
      await driver.get(`${page.url}selenium`);
      expect(await driver.getTitle()).toBe('Caravan test page');
      expect(await driver.executeScript('return document.getElementById("h").textContent')).toBe('hello from /selenium');
      expect(agent.routes.get(SESSION)?.openClients).toBe(1);

      // Another session's token cannot reach this webdriver session.
      agent.routes.add({ sessionId: 'sess_other', browserPort: browser.port, browserWsPath: browser.wsPath, keepAlive: true });
      const other = await mintCdpToken({ sessionId: 'sess_other' });
      const res = await fetch(`${seleniumRemoteUrl('127.0.0.1', port, other)}/session/${wdId}/title`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { value: { error: string } }).value.error).toBe('invalid session id');
    } finally {
      await driver.quit();
    }
    const version = await fetch(`http://127.0.0.1:${browser.port}/json/version`);
    expect(version.ok).toBe(true);
    expect(browser.running()).toBe(true);
    await waitFor(() => agent.routes.get(SESSION)?.openClients === 0, 5_000, 'the webdriver client to detach');
    await agent.routes.flush();
    expect(sink.received.some((s) => s.kind === 'ATTACHED' && s.sessionId === SESSION)).toBe(true);
    expect(sink.received.some((s) => s.kind === 'BYTES' && s.sessionId === SESSION && s.proxyBytes > 0)).toBe(true);
  });

  it('refuses a wrong token', async () => {
    const token = tamper(await mintCdpToken({ sessionId: SESSION }));
    const build = new Builder().usingServer(seleniumRemoteUrl('127.0.0.1', port, token)).forBrowser('chrome').build();
    await expect(build).rejects.toThrow(/unauthorized/);
    const res = await fetch(`http://127.0.0.1:${port}/wd/hub/session`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
  });

  it('rewrites capabilities so chromedriver attaches instead of launching', () => {
    const caps = attachCapabilities({
      capabilities: {
        alwaysMatch: { browserName: 'chrome', webSocketUrl: true, 'goog:chromeOptions': { binary: '/bin/evil', args: ['--foo'], windowTypes: ['webview'] } },
        firstMatch: [{ 'goog:chromeOptions': { extensions: ['x'] } }, {}],
      },
    }, 9222);
    expect(caps).toEqual({
      capabilities: {
        alwaysMatch: { browserName: 'chrome', 'goog:chromeOptions': { debuggerAddress: '127.0.0.1:9222', windowTypes: ['webview'] } },
        firstMatch: [{}, {}],
      },
    });
  });

  it('parses the token from the path prefix', () => {
    expect(parseRelayPath('/session-token/abc.def.ghi/wd/hub/session/1/url')).toEqual({ token: 'abc.def.ghi', command: '/session/1/url' });
    expect(parseRelayPath('/wd/hub/status')).toEqual({ token: undefined, command: '/status' });
    expect(seleniumRemoteUrl('10.0.0.5', 4444, 'a.b.c')).toBe('http://10.0.0.5:4444/session-token/a.b.c/wd/hub');
  });
});
