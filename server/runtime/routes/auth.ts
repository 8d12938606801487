// POST /api/auth/session: the local browser login. The body's token must equal DASHBOARD_TOKEN;
// the reply sets the signed dashboard session cookie. Refused off loopback and on the tunnel.
import { AuthSessionBody } from '../../../schema/runtime.ts';
import { Forbidden, Invalid, NotFound, ServiceError, Unavailable } from '../../errors.ts';
import { isLoopback, viaTunnel } from '../access.ts';
import { mintSessionCookie, sameSecret } from '../dashboardSession.ts';
import type { RuntimeRoute } from './route.ts';

export const authRoutes: RuntimeRoute[] = [
  {
    method: 'POST', url: '/api/auth/session', access: 'login',
    handler: async ({ rt, req, reply }) => {
      reply.header('cache-control', 'no-store');
      if (viaTunnel(req, { publicHost: () => rt.publicHttps.publicHost(), tunnelEnabled: rt.config.PUBLIC_HTTPS_ENABLED })) throw new NotFound(`no route POST /api/auth/session`);
      if (!isLoopback(req)) throw new Forbidden('the browser login is local-only: open the dashboard on this machine, or send x-dashboard-token');
      const token = rt.config.DASHBOARD_TOKEN;
      if (!token) throw new Unavailable('DASHBOARD_TOKEN is not set: there is nothing to log in to (loopback callers are operators)');
      const body = AuthSessionBody.safeParse(req.body);
      if (!body.success) throw new Invalid('send { "token": "<DASHBOARD_TOKEN>" } as JSON');
      if (!sameSecret(body.data.token, token)) throw new ServiceError(401, 'wrong dashboard token');
      const cookie = mintSessionCookie(token, rt.deps.clock.now(), req.protocol === 'https');
      reply.header('set-cookie', cookie.header);
      return { success: true, expiresAt: cookie.expiresAt.toISOString() };
    },
  },
];
