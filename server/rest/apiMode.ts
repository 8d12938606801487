// The AI "API mode" routes: stubs that answer {success:false,message} and point to /v1/sessions.
import type { RestRoute } from './route.ts';

const stub = (what: string): RestRoute['handler'] => async ({ reply }) => {
  reply.code(501);
  return { success: false, message: `${what} is not available (API mode is a stub): create a browser with POST /v1/sessions and drive it over its connectUrl` };
};

export const apiModeRoutes: RestRoute[] = [
  { method: 'POST', url: '/sessions/start', auth: 'apiKey', handler: stub('POST /sessions/start') },
  ...(['act', 'extract', 'observe', 'navigate', 'agentExecute'] as const).map((verb): RestRoute => ({
    method: 'POST', url: `/sessions/:id/${verb}`, auth: 'apiKey', handler: stub(`POST /sessions/{id}/${verb}`),
  })),
];
