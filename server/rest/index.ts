// Registers every REST route on the Fastify app, with API-key auth and one error mapping.
import type { FastifyInstance } from 'fastify';
import { authenticate } from '../auth/apiKeys.ts';
import type { Deps } from '../deps.ts';
import { apiModeRoutes } from './apiMode.ts';
import { contextRoutes } from './contexts.ts';
import { projectRoutes } from './projects.ts';
import type { RestRoute } from './route.ts';
import { sessionRoutes } from './sessions.ts';

export const restRoutes: RestRoute[] = [...sessionRoutes, ...contextRoutes, ...projectRoutes, ...apiModeRoutes];

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v) || undefined;

export function registerRest(app: FastifyInstance, deps: Deps, routes: RestRoute[] = restRoutes): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.url}`;
    if (seen.has(key)) throw new Error(`duplicate route ${key}`);
    seen.add(key);
    app.route({
      method: route.method,
      url: route.url,
      handler: async (req, reply) => {
        // x-svc-api-key is the documented header; the Browserbase SDK's own X-BB-API-Key is
        // accepted too, so that `new Browserbase({ apiKey })` works unchanged.
        const key = header(req.headers['x-svc-api-key']) ?? header(req.headers['x-bb-api-key']);
        const auth = route.auth === 'apiKey' ? await authenticate(deps.db, key, deps.keyCache) : { keyId: '', projectIds: [] };
        const result = await route.handler({
          deps, req, reply, auth,
          params: (req.params ?? {}) as Record<string, string>,
          projectHeader: header(req.headers['x-svc-project-id']),
        });
        if (reply.sent) return reply;
        if (route.status && reply.statusCode === 200) reply.code(route.status);
        return result;
      },
    });
  }
}
