// The authenticated CDP proxy: checks the connection token on the upgrade, then pipes raw bytes
// between the client and the session's browser on 127.0.0.1; also serves rewritten /json endpoints.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { CdpClaims, SecretSource } from '../../schema/token.ts';
import type { Route, RouteRegistry } from '../routes.ts';
import { canHandOver, lateSocatRelay, nodeRelay, startSocatSpawner, type HandOverTiming, type Relay, type SocatSpawner } from './relay.ts';
import { bearer, TokenError, verifyCdpToken } from '../tokens.ts';

export interface TlsFiles {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface CdpProxyOptions {
  routes: RouteRegistry;
  secrets: SecretSource;
  log: Logger;
  /** Address to bind, e.g. 0.0.0.0 or 127.0.0.1. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Host clients use to reach this proxy; goes into rewritten URLs. */
  publicHost: string;
  /** Port clients use to reach this proxy when it differs from the bound one (NAT, load balancer). */
  publicPort?: number;
  tls?: TlsFiles;
  now?: () => Date;
  /** socat's path: upgraded plain-TCP connections are relayed by it (see relay.ts); unset: by Node. */
  socat?: string;
  /** When a connection goes from Node to socat (default: 50 ms quiet, or 2 s after the handshake). */
  handOver?: HandOverTiming;
}

export interface CdpProxy {
  start(): Promise<void>;
  stop(): Promise<void>;
  address(): { host: string; port: number };
}

/** How long start() waits for the socat relay spawner (it loads TypeScript through tsx). */
const SPAWNER_READY_MS = 10_000;

const JSON_PATHS = new Set(['/json/version', '/json/version/', '/json/list', '/json/list/', '/json', '/json/']);
const DEVTOOLS_PATH = /^\/devtools\/(browser|page)\/[A-Za-z0-9_-]+$/;
const SESSION_PATH = /^\/session\/([^/]+)\/?$/;
// Headers never forwarded to the browser: Host is rewritten; Chromium refuses unknown Origins;
// Authorization may carry the token.
const DROPPED_HEADERS = new Set(['host', 'origin', 'authorization']);

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** `host:port`, with IPv6 literals bracketed. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

function tokenOf(req: http.IncomingMessage, url: URL): string | undefined {
  return url.searchParams.get('signingKey') ?? bearer(req.headers.authorization);
}

function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ success: false, message });
  const head = [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ].join('\r\n');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
  res.end(text);
}

export function createCdpProxy(opts: CdpProxyOptions): CdpProxy {
  const log = opts.log.child({ component: 'cdp-proxy' });
  /** Sockets of connections still in their handshake. */
  const pending = new Set<Duplex>();
  const relays = new Set<Relay>();
  // TLS clients are relayed by Node (socat would need the TLS session): no spawner for them.
  let spawner: SocatSpawner | undefined;
  const track = (r: Relay) => {
    relays.add(r);
    void r.done.then(() => relays.delete(r));
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key })
    : http.createServer();
  const scheme = opts.tls ? 'wss' : 'ws';

  function publicPort(): number {
    return opts.publicPort ?? boundPort();
  }

  function boundPort(): number {
    const a = server.address();
    return a && typeof a === 'object' ? a.port : opts.port;
  }

  async function authenticate(req: http.IncomingMessage, url: URL): Promise<{ claims: CdpClaims; token: string }> {
    const token = tokenOf(req, url);
    if (!token) throw new HttpError(401, 'missing token: pass ?signingKey=<token> or Authorization: Bearer');
    try {
      return { claims: await verifyCdpToken(opts.secrets, token, opts.now?.()), token };
    } catch (err) {
      throw new HttpError(401, err instanceof TokenError ? err.message : 'invalid token');
    }
  }

  function routeFor(claims: CdpClaims): Route {
    const route = opts.routes.get(claims.sessionId);
    if (!route) throw new HttpError(404, `session ${claims.sessionId} is not on this node`);
    return route;
  }

  /** Maps a client path to the browser path for this session. */
  function browserPath(pathname: string, claims: CdpClaims, route: Route): string {
    if (pathname === '/' || pathname === '') return route.browserWsPath;
    const m = SESSION_PATH.exec(pathname);
    if (m) {
      if (decodeURIComponent(m[1] ?? '') !== claims.sessionId) throw new HttpError(403, 'token is not for this session');
      return route.browserWsPath;
    }
    if (DEVTOOLS_PATH.test(pathname)) return pathname;
    throw new HttpError(404, 'not found');
  }

  async function onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', (err) => log.debug({ err }, 'client socket error before pipe'));
    const url = new URL(req.url ?? '/', 'http://proxy');
    let claims: CdpClaims;
    let route: Route;
    let path: string;
    try {
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') throw new HttpError(400, 'only websocket upgrades are accepted');
      ({ claims } = await authenticate(req, url));
      route = routeFor(claims);
      path = browserPath(url.pathname, claims, route);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof HttpError ? err.message : 'internal error';
      if (status === 500) log.error({ err }, 'upgrade failed');
      else log.info({ status, message, path: url.pathname }, 'upgrade refused');
      rejectUpgrade(socket, status, message);
      return;
    }
    if (socket.destroyed) return;
    pipe(req, socket, head, claims.sessionId, route, path);
  }

  function pipe(req: http.IncomingMessage, client: Duplex, head: Buffer, sessionId: string, route: Route, path: string): void {
    const slog = log.child({ sessionId });
    // Nothing of the browser's socket is read here until its handshake answer is due: its
    // first chunk is the answer alone (a browser sends nothing after a 101 until asked).
    const upstream = new net.Socket();
    upstream.pause();
    upstream.connect({ host: '127.0.0.1', port: route.browserPort });
    pending.add(client);
    pending.add(upstream);
    (client as net.Socket).setNoDelay?.(true);
    upstream.setNoDelay(true);

    let settled = false;
    const forget = () => {
      pending.delete(client);
      pending.delete(upstream);
    };
    client.on('error', (err) => slog.debug({ err }, 'client socket error'));
    upstream.on('error', (err) => {
      slog.warn({ err, browserPort: route.browserPort }, 'browser socket error');
      if (!settled && client.writable) rejectUpgrade(client, 502, 'browser unreachable');
    });
    // Either side gone before the handshake is through: the other goes too (a client being
    // answered 502 goes once that answer is out).
    const early = () => {
      if (settled) return;
      settled = true;
      forget();
      if (!client.writableEnded) client.destroy();
      upstream.destroy();
    };
    client.once('close', early);
    upstream.once('close', early);

    const lines = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${route.browserPort}`];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] ?? '';
      if (!DROPPED_HEADERS.has(name.toLowerCase())) lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
    }
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);

    // The browser's first bytes are its handshake answer: only a 101 counts as an attached client.
    upstream.once('data', (first: Buffer) => {
      if (settled) return;
      settled = true;
      client.off('close', early);
      upstream.off('close', early);
      const accepted = first.subarray(0, 12).toString('latin1') === 'HTTP/1.1 101';
      if (!accepted) {
        slog.info({ path, answer: first.subarray(0, 40).toString('latin1').split('\r\n')[0] }, 'browser refused the upgrade');
        client.write(first);
        forget();
        track(nodeRelay(client, upstream));
        return;
      }
      let relay: Relay | undefined;
      const attached = opts.routes.attach(sessionId, {
        meter: () => relay?.bytes() ?? 0,
        close: () => relay?.close(),
      });
      slog.debug({ path }, 'client attached');
      const start = (r: Relay) => {
        relay = r;
        forget();
        track(r);
        void r.done.then(() => attached?.detach());
      };
      client.write(first);
      // Plain TCP: Node relays the client's first burst, socat the rest (see lateSocatRelay).
      start(spawner?.ready() && canHandOver(client, upstream) ? lateSocatRelay(client, upstream, spawner, opts.handOver) : nodeRelay(client, upstream));
    });
    upstream.resume();
  }

  async function onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    try {
      if (req.method !== 'GET' || !JSON_PATHS.has(url.pathname)) throw new HttpError(404, 'not found');
      const { claims, token } = await authenticate(req, url);
      const route = routeFor(claims);
      const browserPath = url.pathname === '/json/' ? '/json' : url.pathname;
      const answer = await fetch(`http://127.0.0.1:${route.browserPort}${browserPath}`, { signal: AbortSignal.timeout(5_000) });
      if (!answer.ok) throw new HttpError(502, `browser answered ${answer.status}`);
      sendJson(res, 200, rewrite(await answer.json(), token));
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 502;
      const message = err instanceof HttpError ? err.message : 'browser unreachable';
      if (!(err instanceof HttpError)) log.warn({ err }, 'json endpoint failed');
      sendJson(res, status, { success: false, message });
    }
  }

  /** Points every debugger URL of a /json answer at this proxy, with the token. */
  function rewrite(body: unknown, token: string): unknown {
    const target = (wsUrl: string) => {
      const path = new URL(wsUrl.includes('://') ? wsUrl : `ws://${wsUrl}`).pathname;
      return `${hostPort(opts.publicHost, publicPort())}${path}?signingKey=${encodeURIComponent(token)}`;
    };
    const one = (item: unknown): unknown => {
      if (!item || typeof item !== 'object') return item;
      const out: Record<string, unknown> = { ...(item as Record<string, unknown>) };
      if (typeof out.webSocketDebuggerUrl === 'string') out.webSocketDebuggerUrl = `${scheme}://${target(out.webSocketDebuggerUrl)}`;
      if (typeof out.devtoolsFrontendUrl === 'string') {
        const front = new URL(out.devtoolsFrontendUrl, 'http://relative.invalid');
        const ws = front.searchParams.get('ws') ?? front.searchParams.get('wss');
        if (ws) {
          front.searchParams.delete('ws');
          front.searchParams.delete('wss');
          front.searchParams.set(scheme, target(ws));
          out.devtoolsFrontendUrl = front.origin === 'http://relative.invalid' ? `${front.pathname}${front.search}` : front.toString();
        }
      }
      return out;
    };
    return Array.isArray(body) ? body.map(one) : one(body);
  }

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    void onUpgrade(req, socket, head);
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void onRequest(req, res);
  });
  server.on('clientError', (err, socket) => {
    log.debug({ err }, 'client error');
    socket.destroy();
  });

  return {
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      if (opts.socat && !opts.tls) {
        spawner = startSocatSpawner(opts.socat, log);
        if (!(await spawner.whenReady(SPAWNER_READY_MS))) log.warn({ waitedMs: SPAWNER_READY_MS }, 'the socat relay spawner is not up yet; Node relays until it is');
      }
      log.info({ host: opts.host, port: boundPort(), tls: Boolean(opts.tls) }, 'CDP proxy listening');
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of pending) s.destroy();
      pending.clear();
      const open = [...relays];
      for (const r of open) r.close();
      await Promise.all([closed, ...open.map((r) => r.done)]);
      await spawner?.stop();
      spawner = undefined;
    },
    address() {
      return { host: opts.host, port: boundPort() };
    },
  };
}
