// The CDP proxy against a real Chromium: Playwright, Puppeteer and raw clients; token checks; signals.
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import { chromium as playwright } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createAgent, type Agent } from '../../agent/agent.ts';
import { launchChromium, type Chromium } from '../../agent/launcher/chromium.ts';
import { findSocat, type HandOverTiming, type RelayKind } from '../../agent/proxy/relay.ts';
import {
  cdpCommand, manualTimers, mintCdpToken, secrets, signalSink, startPageServer, tamper, tempDir, testLog, tryUpgrade, waitFor,
} from './helpers.ts';

const GRACE = 1_000;
const SESSION = 'sess_proxy';

// Both relays behind the handshake: Node's pipes and socat (installed by .ci/run; the default
// when present). Every behaviour below holds for each.
const RELAYS: Array<[RelayKind, string | undefined]> = [['node', undefined], ['socat', findSocat('socat', process.env.PATH ?? '')]];

/** socat processes started for this test process (through its proxies' relay spawners). */
function socatProcesses(): number[] {
  const ppid = (pid: number) => {
    try {
      return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    } catch {
      return 0;
    }
  };
  const descends = (pid: number) => {
    for (let p = ppid(pid), hops = 0; p > 1 && hops < 5; p = ppid(p), hops++) if (p === process.pid) return true;
    return false;
  };
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'socat' && descends(pid);
    } catch {
      return false;
    }
  });
}

describe.each(RELAYS)('CDP proxy, relayed by %s', { timeout: 20_000 }, (relay, socat) => {
  let browser: Chromium;
  let agent: Agent;
  let page: Awaited<ReturnType<typeof startPageServer>>;
  let dir: string;
  const sink = signalSink();
  const timers = manualTimers();
  let base: string;

  const route = (sessionId: string, keepAlive: boolean) =>
    agent.routes.add({ sessionId, browserPort: browser.port, browserWsPath: browser.wsPath, keepAlive, browserPid: browser.pid });

  /** A second agent on the same browser, serving one keepAlive session; its connect URL with a token. */
  const otherAgent = async (sessionId: string, handOver?: HandOverTiming): Promise<{ other: Agent; url: string }> => {
    const other = createAgent({
      nodeId: `node-${sessionId}`, publicHost: '127.0.0.1', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/nonexistent/chromedriver', idleGraceMs: GRACE, secrets, signals: async () => undefined, log: testLog(),
      ...(socat ? { socat } : {}), ...(handOver ? { handOver } : {}),
    });
    await other.start();
    other.routes.add({ sessionId, browserPort: browser.port, browserWsPath: browser.wsPath, keepAlive: true });
    return { other, url: `ws://127.0.0.1:${other.address().cdpPort}?signingKey=${await mintCdpToken({ sessionId })}` };
  };

  beforeAll(async () => {
    dir = await tempDir();
    [browser, page] = await Promise.all([
      launchChromium({ chromePath: '/usr/bin/chromium', userDataDir: dir, log: testLog() }),
      startPageServer(),
    ]);
    agent = createAgent({
      nodeId: 'node-test', publicHost: '127.0.0.1', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/nonexistent/chromedriver', idleGraceMs: GRACE, secrets, signals: sink.signals, log: testLog(), timers,
      ...(socat ? { socat } : {}),
    });
    await agent.start();
    base = `ws://127.0.0.1:${agent.address().cdpPort}`;
    route(SESSION, false);
  });

  afterAll(async () => {
    await agent?.stop();
    await browser?.close();
    await page?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('lets Playwright connectOverCDP open a page, read its title and evaluate script', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const b = await playwright.connectOverCDP(`${base}?signingKey=${token}`);
    try {
      const context = b.contexts()[0] ?? (await b.newContext());
      const p = await context.newPage();
      await p.goto(`${page.url}playwright`);
      expect(await p.title()).toBe('Caravan test page');
      expect(await p.evaluate(() => document.getElementById('h')?.textContent)).toBe('hello from /playwright');
      expect(await p.evaluate(() => 6 * 7)).toBe(42);
      await p.close();
    } finally {
      await b.close();
    }
    expect(browser.running()).toBe(true);
  });

  it('lets Puppeteer connect with browserWSEndpoint and drive a page', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const b = await puppeteer.connect({ browserWSEndpoint: `${base}?signingKey=${token}` });
    try {
      const p = await b.newPage();
      await p.goto(`${page.url}puppeteer`);
      expect(await p.title()).toBe('Caravan test page');
      expect(await p.evaluate(() => document.getElementById('h')?.textContent)).toBe('hello from /puppeteer');
      await p.close();
    } finally {
      await b.disconnect();
    }
  });

  it('accepts the /session/<id> form, and a Bearer header instead of the query', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const v1 = await cdpCommand(`${base}/session/${SESSION}?signingKey=${token}`, 'Browser.getVersion');
    expect(String(v1.product)).toMatch(/Chrome/);
    const v2 = await cdpCommand(`${base}/`, 'Browser.getVersion', { Authorization: `Bearer ${token}` });
    expect(v2.product).toBe(v1.product);
  });

  it('drops the client Origin header (Chromium would refuse an unknown origin)', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    expect(await tryUpgrade(`${base}?signingKey=${token}`, { Origin: 'https://evil.example' })).toEqual({ opened: true });
  });

  it.each([
    ['tampered', async () => tamper(await mintCdpToken({ sessionId: SESSION }))],
    ['expired', () => mintCdpToken({ sessionId: SESSION, expIn: -120 })],
    ['not yet valid', () => mintCdpToken({ sessionId: SESSION, nbfIn: 3_600 })],
    ['wrong audience', () => mintCdpToken({ sessionId: SESSION, audience: ['something-else'] })],
    ['wrong secret', () => mintCdpToken({ sessionId: SESSION, secret: new TextEncoder().encode('another-secret-another-secret-another-secret') })],
    ['wrong issuer', () => mintCdpToken({ sessionId: SESSION, issuer: 'someone-else' })],
  ])('answers 401 before any handshake to a %s token', async (_name, mint) => {
    const outcome = await tryUpgrade(`${base}?signingKey=${await mint()}`);
    expect(outcome.opened).toBe(false);
    expect(outcome.status).toBe(401);
    expect(JSON.parse(outcome.body ?? '{}')).toMatchObject({ success: false });
  });

  it('answers 401 when the token is missing', async () => {
    const outcome = await tryUpgrade(base);
    expect(outcome).toMatchObject({ opened: false, status: 401 });
    expect(JSON.parse(outcome.body ?? '{}').message).toMatch(/missing token/);
  });

  it('answers 403 for /session/<other id> and 404 for a session that is not on this node', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    expect(await tryUpgrade(`${base}/session/sess_other?signingKey=${token}`)).toMatchObject({ status: 403 });
    const stranger = await mintCdpToken({ sessionId: 'sess_elsewhere' });
    expect(await tryUpgrade(`${base}?signingKey=${stranger}`)).toMatchObject({ status: 404 });
    expect(await tryUpgrade(`${base}/somewhere/else?signingKey=${token}`)).toMatchObject({ status: 404 });
  });

  it('rewrites /json/version and /json/list to point at the proxy with the token', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const http = `http://127.0.0.1:${agent.address().cdpPort}`;
    for (const p of ['/json/version', '/json/version/']) {
      const res = await fetch(`${http}${p}?signingKey=${token}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { webSocketDebuggerUrl: string; Browser: string };
      expect(body.Browser).toMatch(/Chrome/);
      expect(body.webSocketDebuggerUrl).toBe(`${base}${browser.wsPath}?signingKey=${token}`);
    }
    for (const p of ['/json', '/json/list', '/json/list/']) {
      const list = (await (await fetch(`${http}${p}`, { headers: { Authorization: `Bearer ${token}` } })).json()) as Array<{ webSocketDebuggerUrl: string; devtoolsFrontendUrl: string }>;
      expect(list.length).toBeGreaterThan(0);
      for (const t of list) {
        expect(t.webSocketDebuggerUrl).toMatch(new RegExp(`^${base}/devtools/page/[A-F0-9]+\\?signingKey=`));
        expect(new URL(t.devtoolsFrontendUrl).searchParams.get('ws')).toMatch(new RegExp(`^127\\.0\\.0\\.1:${agent.address().cdpPort}/devtools/page/`));
      }
    }
    // A rewritten page URL is usable as is.
    const list = (await (await fetch(`${http}/json/list?signingKey=${token}`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const target = list.find((t) => t.type === 'page');
    expect(target).toBeDefined();
    expect(await tryUpgrade(target?.webSocketDebuggerUrl ?? '')).toEqual({ opened: true });
    expect((await fetch(`${http}/json/version`)).status).toBe(401);
    expect((await fetch(`${http}/json/version?signingKey=${tamper(token)}`)).status).toBe(401);
    expect((await fetch(`${http}/json/new?signingKey=${token}`)).status).toBe(404);
    expect((await fetch(`${http}/`)).status).toBe(404);
  });

  it('lets Playwright connect with an http endpoint and a Bearer header (it asks /json/version/)', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const b = await playwright.connectOverCDP(`http://127.0.0.1:${agent.address().cdpPort}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(b.contexts().length).toBeGreaterThan(0);
    await b.close();
  });

  it('emits ATTACHED once and counts the bytes moved in both directions', async () => {
    await waitFor(() => agent.routes.get(SESSION)?.openClients === 0, 5_000, 'clients to detach');
    await agent.routes.flush();
    expect(sink.received.filter((s) => s.kind === 'ATTACHED' && s.sessionId === SESSION)).toHaveLength(1);
    const counted = sink.received.filter((s) => s.kind === 'BYTES' && s.sessionId === SESSION).reduce((n, s) => n + (s.kind === 'BYTES' ? s.proxyBytes : 0), 0);
    expect(counted).toBeGreaterThan(10_000);
    expect(counted).toBe(agent.routes.get(SESSION)?.totalBytes);
  });

  it('flushes bytes of a live connection every 5 s', async () => {
    route('sess_live', true);
    const token = await mintCdpToken({ sessionId: 'sess_live' });
    const ws = new WebSocket(`${base}?signingKey=${token}`);
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    await new Promise((r) => ws.once('message', r));
    const before = sink.received.length;
    timers.fire(5_000);
    await agent.routes.flush();
    const bytes = sink.received.slice(before).find((s) => s.kind === 'BYTES' && s.sessionId === 'sess_live');
    expect(bytes).toBeDefined();
    ws.close();
  });

  it('emits IDLE after the grace when the last client leaves a keepAlive=false session', async () => {
    timers.fire(GRACE); // graces left by earlier tests end now
    route('sess_idle', false);
    const token = await mintCdpToken({ sessionId: 'sess_idle' });
    await cdpCommand(`${base}?signingKey=${token}`, 'Browser.getVersion');
    await waitFor(() => timers.pending(GRACE) === 1, 5_000, 'the idle grace to start');
    expect(sink.received.some((s) => s.kind === 'IDLE' && s.sessionId === 'sess_idle')).toBe(false);
    timers.fire(GRACE);
    await waitFor(() => sink.received.some((s) => s.kind === 'IDLE' && s.sessionId === 'sess_idle'), 2_000, 'IDLE');
  });

  it('does not emit IDLE when a client comes back within the grace', async () => {
    timers.fire(GRACE); // graces left by earlier tests end now
    route('sess_back', false);
    const token = await mintCdpToken({ sessionId: 'sess_back' });
    await cdpCommand(`${base}?signingKey=${token}`, 'Browser.getVersion');
    await waitFor(() => timers.pending(GRACE) === 1, 5_000, 'the idle grace to start');
    const ws = new WebSocket(`${base}?signingKey=${token}`);
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => timers.pending(GRACE) === 0, 5_000, 'the reconnect to cancel the grace');
    timers.fire(GRACE);
    expect(sink.received.some((s) => s.kind === 'IDLE' && s.sessionId === 'sess_back')).toBe(false);
    ws.close();
    await waitFor(() => agent.routes.get('sess_back')?.openClients === 0, 5_000, 'detach');
  });

  it('never emits IDLE for a keepAlive=true session', async () => {
    timers.fire(GRACE); // graces left by earlier tests end now
    route('sess_keep', true);
    const token = await mintCdpToken({ sessionId: 'sess_keep' });
    await cdpCommand(`${base}?signingKey=${token}`, 'Browser.getVersion');
    await waitFor(() => agent.routes.get('sess_keep')?.openClients === 0, 5_000, 'detach');
    expect(timers.pending(GRACE)).toBe(0);
    await agent.routes.flush();
    expect(sink.received.some((s) => s.kind === 'ATTACHED' && s.sessionId === 'sess_keep')).toBe(true);
    expect(sink.received.some((s) => s.kind === 'IDLE' && s.sessionId === 'sess_keep')).toBe(false);
  });

  it('closes proxied connections when the route is removed', async () => {
    route('sess_gone', true);
    const token = await mintCdpToken({ sessionId: 'sess_gone' });
    const ws = new WebSocket(`${base}?signingKey=${token}`);
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise((r) => ws.once('close', r));
    agent.routes.remove('sess_gone');
    await closed;
    expect((await tryUpgrade(`${base}?signingKey=${token}`)).status).toBe(404);
  });

  it('answers 502 when the browser of the session does not answer', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(port));
      });
    });
    agent.routes.add({ sessionId: 'sess_dead', browserPort: closed, browserWsPath: browser.wsPath, keepAlive: true });
    const outcome = await tryUpgrade(`${base}?signingKey=${await mintCdpToken({ sessionId: 'sess_dead' })}`);
    expect(outcome).toMatchObject({ opened: false, status: 502 });
    expect(JSON.parse(outcome.body ?? '{}')).toEqual({ success: false, message: 'browser unreachable' });
    agent.routes.remove('sess_dead');
  });

  it('moves a 10 MB result whole, and a burst of commands answered in order, and counts its bytes', async () => {
    await waitFor(() => agent.routes.get(SESSION)?.openClients === 0, 5_000, 'earlier clients to detach');
    const counted = agent.routes.get(SESSION)!.totalBytes;
    const token = await mintCdpToken({ sessionId: SESSION });
    const b = await playwright.connectOverCDP(`${base}?signingKey=${token}`);
    try {
      const p = await (b.contexts()[0] ?? (await b.newContext())).newPage();
      // Random bytes in base64: Playwright negotiates permessage-deflate, and this does not shrink.
      const big = await p.evaluate(() => {
        const raw = new Uint8Array(7_500_000);
        for (let i = 0; i < raw.length; i += 65_536) crypto.getRandomValues(raw.subarray(i, i + 65_536));
        let bin = '';
        for (let i = 0; i < raw.length; i += 8_192) bin += String.fromCharCode(...raw.subarray(i, i + 8_192));
        const text = btoa(bin);
        let sum = 0;
        for (let i = 0; i < text.length; i++) sum = (sum * 31 + text.charCodeAt(i)) >>> 0;
        return { text, sum };
      });
      expect(big.text.length).toBe(10_000_000);
      let sum = 0;
      for (let i = 0; i < big.text.length; i++) sum = (sum * 31 + big.text.charCodeAt(i)) >>> 0;
      expect(sum).toBe(big.sum);
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => p.evaluate((n) => n * 2, i)));
      expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => i * 2));
      await p.close();
    } finally {
      await b.close();
    }
    await waitFor(() => agent.routes.get(SESSION)?.openClients === 0, 5_000, 'the client to detach');
    const moved = agent.routes.get(SESSION)!.totalBytes - counted;
    // Deflate cannot pack base64 below its 6 bits of content per character: at least 7.5 MB moved.
    expect(moved).toBeGreaterThan(7_500_000);
    expect(moved).toBeLessThan(10_800_000);
  });

  it(relay === 'socat' ? 'hands each upgraded connection to one socat once it is quiet, which is gone when the connection ends' : 'relays in this process, without socat', async () => {
    const before = socatProcesses().length;
    const token = await mintCdpToken({ sessionId: SESSION });
    const ws = new WebSocket(`${base}?signingKey=${token}`);
    await new Promise((r) => ws.once('open', r));
    const ask = async (id: number) => {
      ws.send(JSON.stringify({ id, method: 'Browser.getVersion' }));
      const answer = JSON.parse(String(await new Promise((r) => ws.once('message', r)))) as { id: number; result: { product: string } };
      expect(answer).toMatchObject({ id, result: { product: expect.stringMatching(/Chrome/) } });
    };
    await ask(1);
    if (relay === 'socat') {
      // The first exchange went through Node; after a quiet moment socat has the connection.
      await waitFor(() => socatProcesses().length === before + 1, 5_000, 'socat to take the connection');
      await ask(2);
    } else {
      await ask(2);
      expect(socatProcesses()).toHaveLength(before);
    }
    ws.close();
    await waitFor(() => socatProcesses().length === before, 5_000, 'the relay to end');
  });

  it.skipIf(relay !== 'socat')('relays through Node until socat takes over', async () => {
    // A handover that never comes: every answer must still arrive, through this process.
    const { other, url } = await otherAgent('sess_wait', { quietMs: 60_000, latestMs: 60_000 });
    try {
      const before = socatProcesses().length;
      const b = await playwright.connectOverCDP(url, { timeout: 5_000 });
      try {
        const p = await (b.contexts()[0] ?? (await b.newContext())).newPage();
        expect(await p.evaluate(() => 6 * 7)).toBe(42);
        expect(socatProcesses()).toHaveLength(before);
      } finally {
        await b.close();
      }
    } finally {
      await other.stop();
    }
  });

  it.skipIf(relay !== 'socat')('hands a busy connection over mid-stream without losing, doubling or reordering a byte', async () => {
    // Never quiet, so the handover happens at `latestMs`, between (and inside) messages.
    const { other, url } = await otherAgent('sess_busy', { quietMs: 60_000, latestMs: 150 });
    try {
      const before = socatProcesses().length;
      const ws = new WebSocket(url);
      await new Promise((r) => ws.once('open', r));
      const ids: number[] = [];
      const products = new Set<string>();
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { id: number; result?: { product?: string } };
        ids.push(m.id);
        products.add(m.result?.product ?? 'none');
      });
      // Windows of 50 commands in flight, for a while before and after the handover.
      let next = 1;
      const started = Date.now();
      while (Date.now() - started < 600 || socatProcesses().length === before) {
        const until = next + 50;
        for (; next < until; next++) ws.send(JSON.stringify({ id: next, method: 'Browser.getVersion' }));
        await waitFor(() => ids.length === next - 1, 5_000, `answers up to ${next - 1}`);
        if (Date.now() - started > 10_000) throw new Error('socat never took the connection');
      }
      expect(ids).toEqual(Array.from({ length: next - 1 }, (_, i) => i + 1));
      expect([...products].every((p) => /Chrome/.test(p))).toBe(true);
      expect(socatProcesses()).toHaveLength(before + 1);
      ws.close();
      await waitFor(() => socatProcesses().length === before, 5_000, 'the relay to end');
    } finally {
      await other.stop();
    }
  });

  it('leaves no relay behind when the agent stops with connections open', async () => {
    const before = socatProcesses().length;
    const { other, url } = await otherAgent('sess_stop');
    const ws = new WebSocket(url);
    await new Promise((r) => ws.once('open', r));
    if (relay === 'socat') await waitFor(() => socatProcesses().length === before + 1, 5_000, 'socat to take the connection');
    const closed = new Promise((r) => ws.once('close', r));
    await other.stop();
    await closed;
    expect(socatProcesses()).toHaveLength(before);
    expect(browser.running()).toBe(true);
  });
});

describe("the browser's own CDP port", { timeout: 20_000 }, () => {
  let browser: Chromium;
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir();
    browser = await launchChromium({ chromePath: '/usr/bin/chromium', userDataDir: dir, log: testLog() });
  });
  afterAll(async () => {
    await browser?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 only', async () => {
    const portHex = browser.port.toString(16).toUpperCase().padStart(4, '0');
    const listening = (await fs.readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(`:${portHex}`) && f[3] === '0A');
    expect(listening.map((f) => f[1])).toEqual([`0100007F:${portHex}`]);
    const listening6 = (await fs.readFile('/proc/net/tcp6', 'utf8').catch(() => '')).split('\n').slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(`:${portHex}`) && f[3] === '0A');
    expect(listening6).toEqual([]);
  });

  it('refuses connections on another loopback address', async () => {
    const err = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const s = net.connect({ host: '127.0.0.2', port: browser.port });
      s.once('connect', () => {
        s.destroy();
        resolve(undefined);
      });
      s.once('error', resolve);
    });
    expect(err?.code).toBe('ECONNREFUSED');
  });
});
