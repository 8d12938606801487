// The agent's loopback control listener and the control-plane GraphQL client.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../agent/agent.ts';
import { controlPlaneClient } from '../../agent/report.ts';
import { REPORT_NODE_SIGNALS, REPORT_SESSION } from '../../schema/graphql-ops.ts';
import { mintCdpToken, mintLauncherToken, secrets, signalSink, testLog } from './helpers.ts';

const route = { sessionId: 'sess_c', browserPort: 40001, browserWsPath: '/devtools/browser/abc', keepAlive: false, browserPid: 1234 };

describe('control listener', () => {
  let agent: Agent;
  let url: string;

  beforeAll(async () => {
    agent = createAgent({
      nodeId: 'node-c', publicHost: '203.0.113.9', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/nonexistent', idleGraceMs: 1_000, secrets, signals: signalSink().signals, log: testLog(),
    });
    await agent.start();
    url = agent.address().controlUrl;
  });
  afterAll(async () => agent?.stop());

  const put = async (sessionId: string, body: unknown, token?: string) =>
    fetch(`${url}/routes/${sessionId}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('binds 127.0.0.1 only', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(agent.address().webdriverPort).toBeUndefined(); // no chromedriver binary: relay disabled
  });

  it('registers and removes a route with the launcher token of that session', async () => {
    const token = await mintLauncherToken('sess_c');
    const res = await put('sess_c', route, token);
    expect(res.status).toBe(200);
    expect(agent.routes.get('sess_c')).toMatchObject({ ...route, openClients: 0 });
    const del = await fetch(`${url}/routes/sess_c`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
    expect(del.status).toBe(200);
    expect(agent.routes.get('sess_c')).toBeUndefined();
    expect((await fetch(`${url}/routes/sess_c`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } })).status).toBe(404);
  });

  it('answers 401 without a token, with another session\'s token, or with a connection token', async () => {
    expect((await put('sess_c', route)).status).toBe(401);
    expect((await put('sess_c', route, await mintLauncherToken('sess_other'))).status).toBe(401);
    expect((await put('sess_c', route, await mintCdpToken({ sessionId: 'sess_c' }))).status).toBe(401);
    expect((await fetch(`${url}/routes/sess_c`, { method: 'DELETE' })).status).toBe(401);
    expect(agent.routes.get('sess_c')).toBeUndefined();
  });

  it('answers 400 with a clear message for a bad body', async () => {
    const token = await mintLauncherToken('sess_c');
    const bad = await put('sess_c', { ...route, browserPort: 'x', browserWsPath: '/nope' }, token);
    expect(bad.status).toBe(400);
    const { message } = (await bad.json()) as { message: string };
    expect(message).toMatch(/browserPort/);
    expect(message).toMatch(/browserWsPath/);
    expect((await put('sess_c', '{not json', token)).status).toBe(400);
    const mismatch = await put('sess_c', { ...route, sessionId: 'sess_x' }, token);
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { message: string }).message).toMatch(/differs from the path/);
  });

  it('answers /healthz', async () => {
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
  });
});

describe('controlPlaneClient', () => {
  let server: http.Server;
  let base: string;
  const seen: Array<{ auth?: string; body: { query: string; variables: Record<string, unknown> } }> = [];
  let answer: { status: number; body: string } = { status: 200, body: '{"data":{"ok":true}}' };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url !== '/graphql') {
          res.writeHead(404).end();
          return;
        }
        seen.push({ auth: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    base = `http://127.0.0.1:${a && typeof a === 'object' ? a.port : 0}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('posts the shared operations with the bearer token', async () => {
    const client = controlPlaneClient(base, 'tok-123');
    await client.reportSession({ sessionId: 'sess_1', status: 'READY', browser: { port: 1, wsPath: '/devtools/browser/x' } });
    await client.reportNodeSignals([{ kind: 'BYTES', sessionId: 'sess_1', proxyBytes: 5 }]);
    expect(seen).toEqual([
      { auth: 'Bearer tok-123', body: { query: REPORT_SESSION, variables: { input: { sessionId: 'sess_1', status: 'READY', browser: { port: 1, wsPath: '/devtools/browser/x' } } } } },
      { auth: 'Bearer tok-123', body: { query: REPORT_NODE_SIGNALS, variables: { signals: [{ kind: 'BYTES', sessionId: 'sess_1', proxyBytes: 5 }] } } },
    ]);
  });

  it('throws on GraphQL errors, HTTP errors and invalid input', async () => {
    const client = controlPlaneClient(base, 'tok');
    answer = { status: 200, body: JSON.stringify({ errors: [{ message: 'session sess_1 is STOPPED' }] }) };
    await expect(client.reportSession({ sessionId: 'sess_1', status: 'READY' })).rejects.toThrow(/session sess_1 is STOPPED/);
    answer = { status: 502, body: 'bad gateway' };
    await expect(client.reportSession({ sessionId: 'sess_1', status: 'READY' })).rejects.toThrow(/HTTP 502/);
    await expect(client.reportNodeSignals([{ kind: 'BYTES', sessionId: 's', proxyBytes: -1 }])).rejects.toThrow();
    answer = { status: 200, body: '{"data":{"ok":true}}' };
  });
});
