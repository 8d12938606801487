// Who is an operator on GraphQL: the same rule as the runtime's access hook (server/runtime/
// access.ts) for admin routes, applied to the HTTP request or to a graphql-ws upgrade, and the
// guard every operator resolver calls first.
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { Unauthorized } from '../../errors.ts';
import { dashboardHeaderValid, isLoopback, viaTunnel } from '../../runtime/access.ts';
import { sameSecret, validSessionCookie } from '../../runtime/dashboardSession.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import type { GraphQLContext } from '../builder.ts';

/** The message every refused operator call carries: what to send instead. */
export const OPERATOR_REQUIRED = 'operator credentials required: log in to the dashboard (POST /api/auth/session) or send x-dashboard-token';

/** The runtime of an operator call; refuses any other caller (launchers and nodes included). */
export function operatorOf(ctx: GraphQLContext): Runtime {
  if (!ctx.operator) throw new Unauthorized(OPERATOR_REQUIRED);
  return ctx.operator.runtime;
}

/** An HTTP request to /graphql: dashboard header or cookie; loopback when no token is set.
 *  Through the tunnel only the header counts (the browser login is local-only). */
export function isOperatorRequest(req: FastifyRequest, rt: Runtime): boolean {
  const token = rt.config.DASHBOARD_TOKEN;
  if (viaTunnel(req, { publicHost: () => rt.publicHttps.publicHost(), tunnelEnabled: rt.config.PUBLIC_HTTPS_ENABLED })) return dashboardHeaderValid(req, token);
  if (token) return dashboardHeaderValid(req, token) || validSessionCookie(req.headers.cookie, token, rt.deps.clock.now());
  return isLoopback(req);
}

/** The same decision for a WebSocket upgrade (no Fastify request exists for it). The access
 *  helpers read only `headers` and `socket`, which an IncomingMessage has too. */
export function upgradeAccess(req: IncomingMessage, rt: Runtime): 'operator' | 'needs-token' | 'tunnel' {
  const like = req as unknown as FastifyRequest;
  if (viaTunnel(like, { publicHost: () => rt.publicHttps.publicHost(), tunnelEnabled: rt.config.PUBLIC_HTTPS_ENABLED })) return 'tunnel';
  if (isOperatorRequest(like, rt)) return 'operator';
  return 'needs-token';
}

/** graphql-ws connection_init payload `{ dashboardToken }`, for clients that cannot set headers. */
export function connectionTokenValid(params: Readonly<Record<string, unknown>> | undefined, rt: Runtime): boolean {
  const token = rt.config.DASHBOARD_TOKEN;
  const sent = params?.dashboardToken;
  return Boolean(token && typeof sent === 'string' && sameSecret(sent, token));
}
