// Limits of the public frame routes: a fixed-window rate limit per client and path, and a
// check of the declared body size before any of the body is read.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../deps.ts';

/** The reference choices: 60 s windows, 1,200 requests per client and path, 6,000,000 bytes. */
export const RATE_WINDOW_MS = 60_000;
export const RATE_MAX = 1_200;
export const MAX_FRAME_BYTES = 6_000_000;
/** Windows kept at most; expired ones are swept first, then the oldest. */
const MAX_KEYS = 50_000;

export interface FixedWindow {
  readonly max: number;
  readonly windowMs: number;
  /** Counts a request; the seconds until the window resets when it is over the limit. */
  hit(key: string): { allowed: boolean; retryAfterS: number };
}

export function fixedWindow(opts: { clock: Clock; windowMs?: number; max?: number }): FixedWindow {
  const windowMs = opts.windowMs ?? RATE_WINDOW_MS;
  const max = opts.max ?? RATE_MAX;
  const windows = new Map<string, { start: number; count: number }>();
  return {
    max,
    windowMs,
    hit(key) {
      const now = opts.clock.now();
      let w = windows.get(key);
      if (!w || now - w.start >= windowMs) {
        if (w) windows.delete(key);
        if (windows.size >= MAX_KEYS) {
          for (const [k, v] of windows) if (now - v.start >= windowMs) windows.delete(k);
          for (const k of windows.keys()) {
            if (windows.size < MAX_KEYS) break;
            windows.delete(k);
          }
        }
        w = { start: now, count: 0 };
        windows.set(key, w);
      }
      w.count += 1;
      return { allowed: w.count <= max, retryAfterS: Math.max(1, Math.ceil((w.start + windowMs - now) / 1000)) };
    },
  };
}

/**
 * The onRequest hook of a public frame route. `client` names the caller: behind the tunnel every
 * request comes from the local tunnel process, so the visitor address it forwards is used there.
 */
export function ingressLimits(limiter: FixedWindow, client: (req: FastifyRequest) => string, checkSize: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0] ?? req.url;
    const { allowed, retryAfterS } = limiter.hit(`${client(req)} ${path}`);
    if (!allowed) {
      return reply
        .code(429)
        .header('retry-after', String(retryAfterS))
        .header('x-should-retry', 'false')
        .send({ success: false, message: `too many requests: at most ${limiter.max} per ${limiter.windowMs / 1000} s per client on this path; retry in ${retryAfterS} s` });
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (checkSize && declared > MAX_FRAME_BYTES) {
      // Answer before reading the body, and do not keep the connection for the rest of it.
      reply.header('connection', 'close');
      return reply.code(413).send({ success: false, message: `frame too large: ${declared} bytes declared, at most ${MAX_FRAME_BYTES}` });
    }
  };
}
