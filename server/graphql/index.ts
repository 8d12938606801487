// Mounts GraphQL (graphql-yoga + Pothos) at /graphql on the Fastify app.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createYoga, createGraphQLError } from 'graphql-yoga';
import { jwtVerify } from 'jose';
import { LauncherClaims, NodeClaims, LAUNCHER_AUDIENCE, NODE_AUDIENCE, TOKEN_ISSUER } from '../../schema/token.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { builder, type Caller, type GraphQLContext } from './builder.ts';
import './agentReports.ts';
import './nodes.ts';
import type { Runtime } from '../runtime/runtime.ts';
import { isOperatorRequest } from './operator/auth.ts';
import './operator/index.ts';
import { queryLimits } from './operator/limits.ts';
import { attachGraphQLWs, type WsInitialContext } from './operator/ws.ts';

async function callerFrom(deps: Deps, authorization: string | undefined): Promise<Caller> {
  const token = authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
  if (!token) return { kind: 'anonymous' };
  try {
    const { payload } = await jwtVerify(token, await deps.secrets.get(), {
      issuer: TOKEN_ISSUER, audience: [LAUNCHER_AUDIENCE, NODE_AUDIENCE], algorithms: ['HS256'],
    });
    const launcher = LauncherClaims.safeParse(payload);
    if (launcher.success && [payload.aud].flat().includes(LAUNCHER_AUDIENCE)) return { kind: 'launcher', sessionId: launcher.data.sessionId };
    const node = NodeClaims.safeParse(payload);
    if (node.success) return { kind: 'node', nodeId: node.data.nodeId };
  } catch {
    // An invalid credential is treated like none; resolvers refuse anonymous callers.
  }
  return { kind: 'anonymous' };
}

/** `runtime` enables the operator (dashboard) API: its context, and graphql-ws on app.server. */
export function registerGraphQL(app: FastifyInstance, deps: Deps, runtime?: Runtime): void {
  const yoga = createYoga<{ req: FastifyRequest; reply: FastifyReply } | WsInitialContext, GraphQLContext>({
    schema: builder.toSchema(),
    graphqlEndpoint: '/graphql',
    logging: false,
    plugins: queryLimits(),
    maskedErrors: {
      maskError: (error, message) => {
        const original = (error as { originalError?: unknown }).originalError;
        // Parse and validation errors (unknown fields, query limits) say what to fix: kept.
        if (original === undefined && (error as Error).name === 'GraphQLError') return error as Error;
        if (original instanceof ServiceError) {
          return createGraphQLError(original.message, { extensions: { code: original.name, status: original.status } });
        }
        deps.log.error({ err: original ?? error }, 'graphql resolver failed');
        return createGraphQLError(message);
      },
    },
    context: async (init) => {
      // graphql-ws operations were authorized when the socket connected (operator/ws.ts).
      if ('ws' in init) return { deps, caller: { kind: 'anonymous' }, ...(runtime && init.ws.operator ? { operator: { runtime } } : {}) };
      const caller = await callerFrom(deps, init.req.headers.authorization);
      return { deps, caller, ...(runtime && isOperatorRequest(init.req, runtime) ? { operator: { runtime } } : {}) };
    },
  });
  if (runtime) {
    const ws = attachGraphQLWs(app.server, yoga, runtime);
    app.addHook('preClose', () => ws.close());
  }
  app.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}
