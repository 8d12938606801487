// Shared helpers for the agent suites: waiting without sleeps, minting tokens, a page server, a raw upgrade probe.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { pino, type Logger } from 'pino';
import WebSocket from 'ws';
import type { NodeSignal } from '../../schema/agent.ts';
import { CDP_AUDIENCE, LAUNCHER_AUDIENCE, TOKEN_ISSUER, type SecretSource } from '../../schema/token.ts';
import type { Timers } from '../../agent/routes.ts';

export const SECRET = new TextEncoder().encode('test-secret-test-secret-test-secret-0123456789');
export const secrets: SecretSource = { get: async () => SECRET };

export function testLog(): Logger {
  return pino({ level: 'silent' });
}

/** Polls `predicate` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface CdpTokenOptions {
  sessionId: string;
  projectId?: string;
  secret?: Uint8Array;
  audience?: string[];
  /** Seconds relative to now. */
  expIn?: number;
  nbfIn?: number;
  issuer?: string;
}

export async function mintCdpToken(o: CdpTokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sessionId: o.sessionId, projectId: o.projectId ?? 'proj_test', nonce: crypto.randomUUID() })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(o.issuer ?? TOKEN_ISSUER)
    .setSubject(o.sessionId)
    .setAudience(o.audience ?? [CDP_AUDIENCE])
    .setIssuedAt(now)
    .setNotBefore(now + (o.nbfIn ?? 0))
    .setExpirationTime(now + (o.expIn ?? 3600))
    .setJti(crypto.randomUUID())
    .sign(o.secret ?? SECRET);
}

export async function mintLauncherToken(sessionId: string, secret: Uint8Array = SECRET): Promise<string> {
  return new SignJWT({ sessionId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(TOKEN_ISSUER)
    .setSubject(sessionId)
    .setAudience(LAUNCHER_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(secret);
}

/** Changes one character of the signature part. */
export function tamper(jwt: string): string {
  const i = jwt.length - 5;
  const c = jwt[i] === 'A' ? 'B' : 'A';
  return jwt.slice(0, i) + c + jwt.slice(i + 1);
}

/** A local page server for the browser to open. */
export async function startPageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Caravan test page</title><h1 id="h">hello from ${req.url}</h1>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const port = a && typeof a === 'object' ? a.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

export interface UpgradeOutcome {
  opened: boolean;
  status?: number;
  body?: string;
}

/** Opens a raw websocket and reports whether the handshake completed or which status refused it. */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ opened: true });
    });
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ opened: false, status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') });
        ws.terminate();
      });
    });
    ws.on('error', (err) => reject(err));
  });
}

/** Opens a websocket and sends one CDP command; resolves with its result, closing the socket. */
export function cdpCommand(url: string, method: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, method })));
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      if (msg.id !== 1) return;
      ws.close();
      if (msg.error) reject(new Error(msg.error.message));
      else resolve(msg.result ?? {});
    });
    ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

/** Collects the signals an agent sends. */
export function signalSink(): { signals: (list: NodeSignal[]) => Promise<void>; received: NodeSignal[] } {
  const received: NodeSignal[] = [];
  return { received, signals: async (list) => void received.push(...list) };
}

/** Timers the test fires by hand, so that idle grace is tested without waiting. */
export function manualTimers(): Timers & { pending(ms?: number): number; fire(ms: number): void } {
  const pending = new Set<{ fn: () => void; ms: number }>();
  return {
    setTimeout(fn, ms) {
      const h = { fn, ms };
      pending.add(h);
      return h;
    },
    clearTimeout(h) {
      pending.delete(h as { fn: () => void; ms: number });
    },
    pending(ms) {
      return [...pending].filter((h) => ms === undefined || h.ms === ms).length;
    },
    fire(ms) {
      for (const h of [...pending]) {
        if (h.ms !== ms) continue;
        pending.delete(h);
        h.fn();
      }
    },
  };
}

export async function tempDir(prefix = 'caravan-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
