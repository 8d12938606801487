// Who may reach which route: one onRequest hook for the whole listener (companion-runtime
// spec, "Authentication"). Routes fall in five kinds:
// - public: the four tokenized/header-token ingress routes (and the share page's frame stream);
//   they check their own token and are the only ones reachable on the tunnel host without the
//   dashboard token.
// - login: POST /api/auth/session, local only, never on the tunnel host.
// - own: the Browserbase-compatible /v1 and API-mode /sessions routes (API keys), and /graphql
//   called with a launcher or node token; they keep their own credentials.
// - admin: /api, /graphql, /trpc: the dashboard session cookie or x-dashboard-token (loopback
//   callers only when DASHBOARD_TOKEN is unset, which the config allows on loopback only).
// - ui: the dashboard UI and static files: like admin, and never on the tunnel host.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { jwtVerify } from 'jose';
import { LAUNCHER_AUDIENCE, NODE_AUDIENCE, TOKEN_ISSUER, type SecretSource } from '../../schema/token.ts';
import type { Clock } from '../deps.ts';
import { sameSecret, validSessionCookie } from './dashboardSession.ts';
import { loginPage } from './loginPage.ts';

export type AccessKind = 'public' | 'login' | 'own' | 'admin' | 'ui';

/** Declared in a route's `config.access`; routes without it are classified by path. */
export interface AccessConfig {
  access?: AccessKind;
}

export interface AccessOptions {
  dashboardToken: string | undefined;
  /** Whether the public entrypoint is enabled (cf-* headers then mark tunnel traffic too). */
  tunnelEnabled: boolean;
  /** The tunnel's host name once known. */
  publicHost: () => string | undefined;
  secrets: SecretSource;
  clock: Clock;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;
export const isLoopback = (req: FastifyRequest): boolean => LOOPBACK.test(req.socket.remoteAddress ?? '');

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v) || undefined;

/** The request path's kind: declared by the route, else by its path prefix. */
export function accessKind(req: FastifyRequest): AccessKind {
  const declared = (req.routeOptions.config as AccessConfig | undefined)?.access;
  if (declared) return declared;
  const path = req.routeOptions.url ?? req.url.split('?')[0] ?? '/';
  if (path === '/v1' || path.startsWith('/v1/') || path.startsWith('/sessions/')) return 'own';
  if (path === '/graphql' || path === '/api' || path.startsWith('/api/') || path === '/trpc' || path.startsWith('/trpc/')) return 'admin';
  return 'ui';
}

/** The Host header's name, lower case, without port. */
export function hostName(req: FastifyRequest): string {
  const host = (header(req.headers.host) ?? '').trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.replace(/:\d+$/, '').replace(/\.$/, '');
}

/** Whether a request came in through the public entrypoint. Besides the tunnel's own host,
 *  any quick-tunnel host counts (a restarted tunnel has a new one), and so does a request
 *  carrying the headers Cloudflare adds, while the entrypoint is enabled. */
export function viaTunnel(req: FastifyRequest, o: Pick<AccessOptions, 'publicHost' | 'tunnelEnabled'>): boolean {
  const host = hostName(req);
  const pub = o.publicHost();
  if (pub && host === pub) return true;
  if (host === 'trycloudflare.com' || host.endsWith('.trycloudflare.com')) return true;
  return o.tunnelEnabled && Boolean(req.headers['cf-connecting-ip'] || req.headers['cf-ray']);
}

/** The client a rate limit counts: behind the tunnel, the visitor address it forwards. */
export function clientKey(req: FastifyRequest, o: Pick<AccessOptions, 'publicHost' | 'tunnelEnabled'>): string {
  const forwarded = header(req.headers['cf-connecting-ip']);
  if (forwarded && isLoopback(req) && viaTunnel(req, o)) return forwarded.slice(0, 64);
  return req.ip;
}

export function dashboardHeaderValid(req: FastifyRequest, token: string | undefined): boolean {
  const sent = header(req.headers['x-dashboard-token']);
  return Boolean(token && sent && sameSecret(sent, token));
}

/** A launcher or node token on /graphql (checked again by the resolvers). */
async function agentBearer(req: FastifyRequest, secrets: SecretSource): Promise<boolean> {
  const token = /^Bearer\s+(.+)$/i.exec(header(req.headers.authorization) ?? '')?.[1];
  if (!token) return false;
  try {
    await jwtVerify(token, await secrets.get(), { issuer: TOKEN_ISSUER, audience: [LAUNCHER_AUDIENCE, NODE_AUDIENCE], algorithms: ['HS256'] });
    return true;
  } catch {
    return false;
  }
}

/** The same answer as a route that does not exist: the tunnel host reveals nothing. */
function notFound(req: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send({ success: false, message: `no route ${req.method} ${req.url.split('?')[0]}` });
}

export function accessHook(o: AccessOptions) {
  return async function access(req: FastifyRequest, reply: FastifyReply) {
    const kind = accessKind(req);
    if (viaTunnel(req, o)) {
      if (kind === 'public') return;
      // The browser login is local-only and the UI is never served remotely; remote admin
      // access uses x-dashboard-token directly (a cookie does not count here).
      if (kind === 'login' || kind === 'ui' || !dashboardHeaderValid(req, o.dashboardToken)) return notFound(req, reply);
      return;
    }
    if (kind === 'public' || kind === 'login' || kind === 'own') return;
    if (req.routeOptions.url === '/graphql' && (await agentBearer(req, o.secrets))) return;
    if (o.dashboardToken) {
      if (dashboardHeaderValid(req, o.dashboardToken) || validSessionCookie(req.headers.cookie, o.dashboardToken, o.clock.now())) return;
    } else if (isLoopback(req)) {
      return;
    }
    if (kind === 'ui' && /text\/html/.test(header(req.headers.accept) ?? '') && isLoopback(req)) {
      return reply.code(401).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(loginPage());
    }
    return reply.code(401).send({ success: false, message: 'dashboard credentials required: send x-dashboard-token, or log in locally with POST /api/auth/session' });
  };
}
