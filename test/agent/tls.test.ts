// The CDP proxy over TLS (wss) with a throwaway self-signed certificate.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createAgent, type Agent } from '../../agent/agent.ts';
import { findSocat } from '../../agent/proxy/relay.ts';
import { launchChromium, type Chromium } from '../../agent/launcher/chromium.ts';
import { mintCdpToken, secrets, signalSink, tempDir, testLog } from './helpers.ts';

const SESSION = 'sess_tls';

describe('CDP proxy over TLS', { timeout: 20_000 }, () => {
  let browser: Chromium;
  let agent: Agent;
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir();
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
    const profile = path.join(dir, 'profile');
    await fs.mkdir(profile);
    browser = await launchChromium({ chromePath: '/usr/bin/chromium', userDataDir: profile, log: testLog() });
    agent = createAgent({
      nodeId: 'node-tls', publicHost: '127.0.0.1', bindHost: '127.0.0.1', cdpPort: 0, controlPort: 0, webdriverPort: 0,
      chromedriverPath: '/nonexistent', idleGraceMs: 1_000, secrets, signals: signalSink().signals, log: testLog(),
      tls: { cert: await fs.readFile(cert), key: await fs.readFile(key) },
      // As AGENT_RELAY=auto would: socat is there, and TLS connections still go through Node.
      socat: findSocat('socat', process.env.PATH ?? ''),
    });
    await agent.start();
    agent.routes.add({ sessionId: SESSION, browserPort: browser.port, browserWsPath: browser.wsPath, keepAlive: true });
  });

  afterAll(async () => {
    await agent?.stop();
    await browser?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves wss and rewrites /json/version to wss URLs', async () => {
    const token = await mintCdpToken({ sessionId: SESSION });
    const port = agent.address().cdpPort;
    const version = await new Promise<{ webSocketDebuggerUrl: string }>((resolve, reject) => {
      https.get(`https://127.0.0.1:${port}/json/version?signingKey=${token}`, { rejectUnauthorized: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      }).on('error', reject);
    });
    expect(version.webSocketDebuggerUrl).toBe(`wss://127.0.0.1:${port}${browser.wsPath}?signingKey=${token}`);

    const product = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(version.webSocketDebuggerUrl, { rejectUnauthorized: false });
      ws.on('open', () => ws.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' })));
      ws.on('message', (data) => {
        ws.close();
        resolve(String((JSON.parse(String(data)) as { result: { product: string } }).result.product));
      });
      ws.on('error', reject);
    });
    expect(product).toMatch(/Chrome/);
  });

  it('answers 401 over TLS too', async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${agent.address().cdpPort}/`, { rejectUnauthorized: false });
      ws.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode);
        ws.terminate();
      });
      ws.on('open', () => resolve(101));
      ws.on('error', reject);
    });
    expect(status).toBe(401);
  });
});
