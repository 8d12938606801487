// Mounts the operator tRPC router at /trpc. Operator access: the x-dashboard-token header
// when DASHBOARD_TOKEN is set; otherwise only callers on the loopback interface.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { appRouter, type TrpcContext } from './router.ts';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export function isOperator(req: FastifyRequest, token: string | undefined): boolean {
  if (!token) return LOOPBACK.test(req.socket.remoteAddress ?? '');
  const sent = req.headers['x-dashboard-token'];
  if (typeof sent !== 'string') return false;
  const a = crypto.createHash('sha256').update(sent).digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b);
}

export function registerTrpc(app: FastifyInstance, deps: Deps, config: Pick<Config, 'DASHBOARD_TOKEN'>): void {
  void app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: ({ req }: { req: FastifyRequest }): TrpcContext => ({ deps, operator: isOperator(req, config.DASHBOARD_TOKEN) }),
    },
  });
}
