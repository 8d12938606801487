// /v1/sessions routes (Browserbase-compatible) and the custom cdp-url route.
import { NotImplemented } from '../errors.ts';
import { createCdpUrl } from '../sessions/cdpUrl.ts';
import { createSession } from '../sessions/create.ts';
import { sessionDebug } from '../sessions/debug.ts';
import { releaseSession } from '../sessions/end.ts';
import { getSession, listSessions } from '../sessions/read.ts';
import { wrapped, type RestRoute } from './route.ts';

const notImplemented = (what: string): RestRoute['handler'] => async () => {
  throw new NotImplemented(`${what} is not implemented by Caravan`);
};

export const sessionRoutes: RestRoute[] = [
  {
    method: 'POST', url: '/v1/sessions', auth: 'apiKey', status: 201,
    handler: ({ deps, auth, req, projectHeader }) => createSession(deps, auth, req.body, projectHeader, req.ip),
  },
  {
    method: 'GET', url: '/v1/sessions', auth: 'apiKey',
    handler: ({ deps, auth, req, projectHeader }) => listSessions(deps.db, auth, req.query, projectHeader),
  },
  {
    method: 'GET', url: '/v1/sessions/:id', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(await getSession(deps.db, auth, params.id!)),
  },
  {
    method: 'POST', url: '/v1/sessions/:id', auth: 'apiKey',
    handler: async ({ deps, auth, params, req }) => wrapped(await releaseSession(deps, auth, params.id!, req.body)),
  },
  {
    method: 'GET', url: '/v1/sessions/:id/debug', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(await sessionDebug(deps, auth, params.id!)),
  },
  { method: 'GET', url: '/v1/sessions/:id/logs', auth: 'apiKey', handler: notImplemented('session logs') },
  { method: 'GET', url: '/v1/sessions/:id/recording', auth: 'apiKey', handler: notImplemented('session recording') },
  { method: 'POST', url: '/v1/sessions/:id/uploads', auth: 'apiKey', handler: notImplemented('session uploads') },
  { method: 'POST', url: '/v1/extensions', auth: 'apiKey', handler: notImplemented('extensions') },
  { method: 'GET', url: '/v1/extensions/:id', auth: 'apiKey', handler: notImplemented('extensions') },
  { method: 'DELETE', url: '/v1/extensions/:id', auth: 'apiKey', handler: notImplemented('extensions') },
  {
    method: 'POST', url: '/sessions/:id/cdp-url', auth: 'apiKey',
    handler: async ({ deps, auth, params, req }) => wrapped(await createCdpUrl(deps, auth, params.id!, req.body)),
  },
];
