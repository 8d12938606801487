// The agent's loopback-only control listener: launchers register and remove their session's route here.
import http from 'node:http';
import type { Logger } from 'pino';
import { RouteRegistration } from '../schema/agent.ts';
import type { SecretSource } from '../schema/token.ts';
import type { RouteRegistry } from './routes.ts';
import { bearer, TokenError, verifyLauncherToken } from './tokens.ts';

export interface ControlListenerOptions {
  routes: RouteRegistry;
  secrets: SecretSource;
  log: Logger;
  /** 0 picks a free port. Always bound to 127.0.0.1. */
  port: number;
  now?: () => Date;
}

export interface ControlListener {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `http://127.0.0.1:<port>`, the value launchers get as CARAVAN_AGENT_URL. */
  url(): string;
}

const MAX_BODY = 64 * 1024;
const ROUTE_PATH = /^\/routes\/([^/]+)$/;

class Refused extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Refused(413, 'body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new Refused(400, 'body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

export function createControlListener(opts: ControlListenerOptions): ControlListener {
  const log = opts.log.child({ component: 'control' });
  const server = http.createServer((req, res) => void handle(req, res));

  async function authorize(req: http.IncomingMessage, sessionId: string): Promise<void> {
    const token = bearer(req.headers.authorization);
    if (!token) throw new Refused(401, 'missing launcher token (Authorization: Bearer)');
    try {
      await verifyLauncherToken(opts.secrets, token, sessionId, opts.now?.());
    } catch (err) {
      throw new Refused(401, err instanceof TokenError ? err.message : 'invalid token');
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://control');
    try {
      if (pathname === '/healthz' && req.method === 'GET') {
        reply(res, 200, { ok: true, routes: opts.routes.list().length });
        return;
      }
      const m = ROUTE_PATH.exec(pathname);
      if (!m?.[1]) throw new Refused(404, 'not found');
      const sessionId = decodeURIComponent(m[1]);
      if (req.method === 'PUT') {
        await authorize(req, sessionId);
        const parsed = RouteRegistration.safeParse(await readJson(req));
        if (!parsed.success) {
          throw new Refused(400, `invalid route: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
        }
        if (parsed.data.sessionId !== sessionId) throw new Refused(400, 'invalid route: body sessionId differs from the path');
        const route = opts.routes.add(parsed.data);
        log.info({ sessionId, browserPort: route.browserPort, keepAlive: route.keepAlive }, 'route registered');
        reply(res, 200, { ok: true });
        return;
      }
      if (req.method === 'DELETE') {
        await authorize(req, sessionId);
        const existed = opts.routes.remove(sessionId);
        log.info({ sessionId, existed }, 'route removed');
        reply(res, existed ? 200 : 404, { ok: existed });
        return;
      }
      throw new Refused(405, 'method not allowed');
    } catch (err) {
      const status = err instanceof Refused ? err.status : 500;
      const message = err instanceof Refused ? err.message : 'internal error';
      if (status === 500) log.error({ err }, 'control request failed');
      reply(res, status, { ok: false, message });
    }
  }

  return {
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      log.info({ url: this.url() }, 'control listener on loopback');
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    url() {
      const a = server.address();
      return `http://127.0.0.1:${a && typeof a === 'object' ? a.port : opts.port}`;
    },
  };
}
