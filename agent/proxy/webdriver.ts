// The WebDriver relay: checks the connection token and forwards W3C WebDriver commands to one shared
// chromedriver that attaches to the session's already running browser (never launches its own).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import readline from 'node:readline';
import type { Logger } from 'pino';
import type { CdpClaims, SecretSource } from '../../schema/token.ts';
import type { AttachedClient, RouteRegistry } from '../routes.ts';
import { bearer, TokenError, verifyCdpToken } from '../tokens.ts';
import { hostPort, type TlsFiles } from './cdp.ts';

export interface WebDriverRelayOptions {
  routes: RouteRegistry;
  secrets: SecretSource;
  log: Logger;
  host: string;
  /** 0 picks a free port. */
  port: number;
  chromedriverPath: string;
  tls?: TlsFiles;
  now?: () => Date;
  /** How long chromedriver may take to answer /status ready. */
  startTimeoutMs?: number;
}

export interface WebDriverRelay {
  /** False when the chromedriver binary is missing; the relay then never listens. */
  readonly enabled: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  address(): { host: string; port: number } | undefined;
}

/** Path prefix that carries the token, so that stock clients (which drop the query string) keep it. */
const TOKEN_PREFIX = '/session-token/';
const MAX_BODY = 64 * 1024 * 1024;
/** chromeOptions that make sense when attaching to a running browser; everything else is dropped. */
const KEPT_CHROME_OPTIONS = ['windowTypes', 'perfLoggingPrefs'];

/**
 * The URL a Selenium client is given: the token rides in the path prefix, because selenium-webdriver
 * (and others) drop the query string of the server URL but append `/session...` to its path.
 */
export function seleniumRemoteUrl(publicHost: string, port: number, token: string, secure = false): string {
  return `${secure ? 'https' : 'http'}://${hostPort(publicHost, port)}${TOKEN_PREFIX}${encodeURIComponent(token)}/wd/hub`;
}

class WdError extends Error {
  constructor(readonly status: number, readonly error: string, message: string) {
    super(message);
  }
}

/** Splits a relay path into the token it carries (if any) and the WebDriver command path. */
export function parseRelayPath(pathname: string): { token?: string; command: string } {
  let token: string | undefined;
  let rest = pathname;
  if (rest.startsWith(TOKEN_PREFIX)) {
    const end = rest.indexOf('/', TOKEN_PREFIX.length);
    token = decodeURIComponent(rest.slice(TOKEN_PREFIX.length, end === -1 ? undefined : end));
    rest = end === -1 ? '/' : rest.slice(end);
  }
  if (rest === '/wd/hub' || rest.startsWith('/wd/hub/')) rest = rest.slice('/wd/hub'.length) || '/';
  return { token, command: rest.replace(/\/+$/, '') || '/' };
}

function basicPassword(header: string | undefined): string | undefined {
  const m = header ? /^Basic\s+(\S+)$/i.exec(header) : null;
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i === -1 ? undefined : decoded.slice(i + 1) || undefined;
}

/**
 * Rewrites new-session capabilities so chromedriver attaches to the browser at `browserPort`
 * instead of launching one: chromeOptions reduced to debuggerAddress (plus harmless keys), and BiDi
 * (`webSocketUrl`) removed because its URL would point at the node's loopback.
 */
export function attachCapabilities(body: unknown, browserPort: number): Record<string, unknown> {
  const input = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {});
  const requested = { ...obj(obj(input.capabilities).alwaysMatch) };
  const firstMatch = Array.isArray(obj(input.capabilities).firstMatch) ? (obj(input.capabilities).firstMatch as unknown[]).map(obj) : [{}];
  // Fold chromeOptions asked for in firstMatch into alwaysMatch: only one browser exists here.
  const asked = { ...firstMatch.reduce((acc, m) => ({ ...acc, ...obj(m['goog:chromeOptions']) }), {}), ...obj(requested['goog:chromeOptions']) };
  const chromeOptions: Record<string, unknown> = { debuggerAddress: `127.0.0.1:${browserPort}` };
  for (const k of KEPT_CHROME_OPTIONS) if (k in asked) chromeOptions[k] = asked[k];
  delete requested.webSocketUrl;
  const alwaysMatch = { ...requested, 'goog:chromeOptions': chromeOptions };
  const cleanFirst = firstMatch.map((m) => {
    const { ['goog:chromeOptions']: _drop, webSocketUrl: _ws, ...rest } = m;
    return rest;
  });
  return { capabilities: { alwaysMatch, firstMatch: cleanFirst } };
}

export function createWebDriverRelay(opts: WebDriverRelayOptions): WebDriverRelay {
  const log = opts.log.child({ component: 'webdriver-relay' });
  const enabled = isExecutable(opts.chromedriverPath);
  const server = opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }) : http.createServer();
  /** webdriver session id -> caravan session. */
  const wdSessions = new Map<string, { sessionId: string; client: AttachedClient | undefined }>();
  let driver: { child: ChildProcess; port: number } | undefined;
  let starting: Promise<number> | undefined;
  let stopped = false;

  function ensureDriver(): Promise<number> {
    if (driver) return Promise.resolve(driver.port);
    starting ??= startDriver().finally(() => {
      starting = undefined;
    });
    return starting;
  }

  async function startDriver(): Promise<number> {
    const t0 = performance.now();
    const child = spawn(opts.chromedriverPath, ['--port=0', '--log-level=WARNING'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const timeoutMs = opts.startTimeoutMs ?? 15_000;
    readline.createInterface({ input: child.stderr }).on('line', (line) => log.debug({ line }, 'chromedriver stderr'));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('chromedriver did not report its port in time')), timeoutMs);
      child.once('error', (err) => { clearTimeout(timer); reject(err); });
      child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`chromedriver exited (${code ?? signal}) during start`)); });
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        const m = /started successfully on port (\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        } else log.debug({ line }, 'chromedriver');
      });
    }).catch((err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(2_000) })
        .then(async (r) => ((await r.json()) as { value?: { ready?: boolean } }).value?.ready === true)
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error('chromedriver did not become ready');
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    if (stopped) {
      child.kill('SIGKILL');
      throw new Error('relay stopped');
    }
    child.once('exit', (code, signal) => {
      if (driver?.child === child) driver = undefined;
      for (const [id, s] of wdSessions) {
        wdSessions.delete(id);
        s.client?.detach();
      }
      if (!stopped) log.warn({ code, signal }, 'chromedriver exited; it restarts on the next request');
    });
    driver = { child, port };
    log.info({ port, ms: Math.round(performance.now() - t0) }, 'chromedriver started');
    return port;
  }

  async function authenticate(req: http.IncomingMessage, pathToken: string | undefined): Promise<CdpClaims> {
    const token = pathToken ?? bearer(req.headers.authorization) ?? basicPassword(req.headers.authorization);
    if (!token) throw new WdError(401, 'unknown error', `unauthorized: missing token (use the seleniumRemoteUrl of the session)`);
    try {
      return await verifyCdpToken(opts.secrets, token, opts.now?.());
    } catch (err) {
      throw new WdError(401, 'unknown error', `unauthorized: ${err instanceof TokenError ? err.message : 'invalid token'}`);
    }
  }

  function readBody(req: http.IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          reject(new WdError(413, 'invalid argument', 'request body too large'));
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  }

  /** Sends one command to chromedriver; the answer is buffered (commands and answers are JSON). */
  async function toDriver(method: string, path: string, body: Buffer): Promise<{ status: number; body: Buffer; type: string }> {
    const port = await ensureDriver();
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { Accept: 'application/json', 'Content-Length': body.length };
      if (body.length > 0) headers['Content-Type'] = 'application/json; charset=utf-8';
      const r = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, body: Buffer.concat(chunks), type: String(res.headers['content-type'] ?? 'application/json; charset=utf-8') }));
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  }

  function send(res: http.ServerResponse, status: number, body: Buffer | string, type = 'application/json; charset=utf-8'): void {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache' });
    res.end(body);
  }

  async function newSession(claims: CdpClaims, body: Buffer, res: http.ServerResponse): Promise<void> {
    const route = opts.routes.get(claims.sessionId);
    if (!route) throw new WdError(404, 'session not created', `session ${claims.sessionId} is not on this node`);
    let parsed: unknown;
    try {
      parsed = body.length ? JSON.parse(body.toString('utf8')) : {};
    } catch {
      throw new WdError(400, 'invalid argument', 'body is not JSON');
    }
    const rewritten = Buffer.from(JSON.stringify(attachCapabilities(parsed, route.browserPort)));
    const answer = await toDriver('POST', '/session', rewritten);
    const wdId = sessionIdOf(answer.body);
    if (answer.status === 200 && wdId) {
      const sessionId = claims.sessionId;
      const client = opts.routes.attach(sessionId, { close: () => forget(wdId, true) });
      wdSessions.set(wdId, { sessionId, client });
      log.info({ sessionId, wdSession: wdId }, 'webdriver session attached');
    }
    opts.routes.addBytes(claims.sessionId, body.length + answer.body.length);
    send(res, answer.status, answer.body, answer.type);
  }

  /** Drops a webdriver session; when its route went away, also ends it at chromedriver. */
  function forget(wdId: string, endAtDriver: boolean): void {
    const s = wdSessions.get(wdId);
    if (!s) return;
    wdSessions.delete(wdId);
    s.client?.detach();
    if (endAtDriver && driver) void toDriver('DELETE', `/session/${wdId}`, Buffer.alloc(0)).catch(() => undefined);
  }

  async function onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay');
    const { token, command } = parseRelayPath(url.pathname);
    try {
      const claims = await authenticate(req, token);
      const body = await readBody(req);
      const method = req.method ?? 'GET';
      if (command === '/status' && method === 'GET') {
        send(res, 200, JSON.stringify({ value: { ready: true, message: 'caravan webdriver relay' } }));
        return;
      }
      if (command === '/session' && method === 'POST') {
        await newSession(claims, body, res);
        return;
      }
      const m = /^\/session\/([^/]+)(\/.*)?$/.exec(command);
      if (!m?.[1]) throw new WdError(404, 'unknown command', `unknown command ${method} ${command}`);
      const wdId = m[1];
      if (wdSessions.get(wdId)?.sessionId !== claims.sessionId) throw new WdError(404, 'invalid session id', `no such webdriver session ${wdId}`);
      const answer = await toDriver(method, `${command}${url.search}`, body);
      opts.routes.addBytes(claims.sessionId, body.length + answer.body.length);
      if (method === 'DELETE' && !m[2]) forget(wdId, false);
      send(res, answer.status, answer.body, answer.type);
    } catch (err) {
      const e = err instanceof WdError ? err : new WdError(500, 'unknown error', `relay error: ${err instanceof Error ? err.message : String(err)}`);
      if (e.status >= 500) log.error({ err }, 'webdriver relay failed');
      else log.info({ status: e.status, error: e.error, message: e.message }, 'webdriver request refused');
      if (!res.headersSent) send(res, e.status, JSON.stringify({ value: { error: e.error, message: e.message, stacktrace: '' } }));
      else res.destroy();
    }
  }

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void onRequest(req, res);
  });

  return {
    enabled,
    async start() {
      if (!enabled) {
        log.info({ chromedriverPath: opts.chromedriverPath }, 'chromedriver not found; WebDriver relay disabled');
        return;
      }
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      log.info({ host: opts.host, port: this.address()?.port }, 'WebDriver relay listening');
    },
    async stop() {
      stopped = true;
      if (enabled && server.listening) {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
      }
      await starting?.catch(() => undefined);
      const d = driver;
      driver = undefined;
      if (d && d.child.exitCode === null && d.child.signalCode === null) {
        const exited = new Promise<void>((resolve) => d.child.once('exit', () => resolve()));
        d.child.kill('SIGTERM');
        const timer = setTimeout(() => d.child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    },
    address() {
      const a = server.address();
      return a && typeof a === 'object' ? { host: opts.host, port: a.port } : undefined;
    },
  };
}

function sessionIdOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { value?: { sessionId?: unknown }; sessionId?: unknown };
    const id = parsed.value?.sessionId ?? parsed.sessionId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  try {
    fs.accessSync(path, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
