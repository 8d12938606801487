// /v1/contexts routes: create (with a 15-minute upload URL), retrieve metadata, refresh the URL.
import { createContext, getContext, refreshUploadUrl, type ContextDeps } from '../contexts/contexts.ts';
import type { Deps } from '../deps.ts';
import { wrapped, type RestRoute } from './route.ts';

const contextDeps = (deps: Deps): ContextDeps => ({
  db: deps.db, store: deps.store, maxArchiveBytes: deps.config.CONTEXT_MAX_BYTES, uploadWindowSeconds: deps.config.CONTEXT_UPLOAD_WINDOW,
});

export const contextRoutes: RestRoute[] = [
  {
    method: 'POST', url: '/v1/contexts', auth: 'apiKey', status: 201,
    handler: async ({ deps, auth, req, projectHeader }) => wrapped(await createContext(contextDeps(deps), auth, req.body, projectHeader)),
  },
  {
    method: 'GET', url: '/v1/contexts/:id', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(await getContext(contextDeps(deps), auth, params.id!)),
  },
  {
    method: 'PUT', url: '/v1/contexts/:id', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(await refreshUploadUrl(contextDeps(deps), auth, params.id!)),
  },
];
