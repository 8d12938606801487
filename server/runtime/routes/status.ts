// Read-only runtime state: the public entrypoint and the statistics card data.
import type { RuntimeRoute } from './route.ts';

export const statusRoutes: RuntimeRoute[] = [
  { method: 'GET', url: '/api/public-https', access: 'admin', handler: async ({ rt }) => rt.publicHttps.state() },
  { method: 'GET', url: '/api/stats', access: 'admin', handler: ({ rt }) => rt.stats() },
];
