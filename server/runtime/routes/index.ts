// Registers every operator-runtime route (the /api of the companion spec, and /share), refusing
// duplicates; frame routes get the raw-JPEG body parser, their size limit and the rate limit.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ingressLimits, MAX_FRAME_BYTES } from '../ingress.ts';
import type { Runtime } from '../runtime.ts';
import { activityRoutes } from './activity.ts';
import { authRoutes } from './auth.ts';
import type { RuntimeRoute } from './route.ts';
import { settingsRoutes } from './settings.ts';
import { shareRoutes } from './share.ts';
import { statusRoutes } from './status.ts';

export const runtimeRoutes: RuntimeRoute[] = [...settingsRoutes, ...statusRoutes, ...authRoutes, ...activityRoutes, ...shareRoutes];

export function registerRuntimeRoutes(app: FastifyInstance, rt: Runtime, client: (req: FastifyRequest) => string, routes: RuntimeRoute[] = runtimeRoutes): void {
  const seen = new Set<string>();
  for (const r of routes) {
    const key = `${r.method} ${r.url}`;
    if (seen.has(key)) throw new Error(`duplicate route ${key}`);
    seen.add(key);
  }
  void app.register(async (scope) => {
    // Frames may come as raw JPEG bytes; only these routes accept such bodies.
    scope.addContentTypeParser(['image/jpeg', 'application/octet-stream'], { parseAs: 'buffer', bodyLimit: MAX_FRAME_BYTES }, (_req, body, done) => done(null, body));
    for (const r of routes) {
      scope.route({
        method: r.method,
        url: r.url,
        config: { access: r.access },
        ...(r.ingress === 'frame' ? { bodyLimit: MAX_FRAME_BYTES } : {}),
        ...(r.ingress ? { onRequest: ingressLimits(rt.limiter, client, r.ingress === 'frame') } : {}),
        handler: async (req, reply) => {
          // Operator data is never cached (settings replies, errors included, above all).
          if (r.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
          const result = await r.handler({ rt, req, reply, params: (req.params ?? {}) as Record<string, string> });
          if (reply.sent) return reply;
          return result;
        },
      });
    }
  });
}
