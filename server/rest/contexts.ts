// /v1/contexts routes. Until object storage lands (contexts issue) they answer 501 clearly.
import { NotImplemented } from '../errors.ts';
import type { RestRoute } from './route.ts';

const later: RestRoute['handler'] = async () => {
  throw new NotImplemented('contexts are not available on this server yet (object storage is not configured in this version)');
};

export const contextRoutes: RestRoute[] = [
  { method: 'POST', url: '/v1/contexts', auth: 'apiKey', handler: later },
  { method: 'GET', url: '/v1/contexts/:id', auth: 'apiKey', handler: later },
  { method: 'PUT', url: '/v1/contexts/:id', auth: 'apiKey', handler: later },
];
