// The operator API over tRPC (used by the `caravan` CLI): projects, API keys and nodes.
import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/apiKeys.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { createProject, listProjects } from '../projects/projects.ts';
import { drainNode, listNodes } from '../nodes/drain.ts';

export interface TrpcContext {
  deps: Deps;
  /** Whether the caller presented the operator credential (or none is needed). */
  operator: boolean;
}

const t = initTRPC.context<TrpcContext>().create();

const CODES: Record<number, TRPCError['code']> = { 400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT', 429: 'TOO_MANY_REQUESTS' };

const operator = t.procedure.use(async ({ ctx, next }) => {
  if (!ctx.operator) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'operator API: send the dashboard token in x-dashboard-token' });
  return next();
});

async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ServiceError) throw new TRPCError({ code: CODES[err.status] ?? 'INTERNAL_SERVER_ERROR', message: err.message });
    throw err;
  }
}

export const appRouter = t.router({
  project: t.router({
    create: operator
      .input(z.object({ name: z.string(), concurrency: z.number().int().optional(), defaultTimeout: z.number().int().optional() }))
      .mutation(({ ctx, input }) => run(() => createProject(ctx.deps.db, input))),
    list: operator.query(({ ctx }) => run(() => listProjects(ctx.deps.db))),
  }),
  apikey: t.router({
    create: operator
      .input(z.object({ projects: z.array(z.string().min(1)).min(1) }))
      .mutation(({ ctx, input }) => run(() => createApiKey(ctx.deps.db, input.projects))),
    list: operator.query(({ ctx }) => run(() => listApiKeys(ctx.deps.db))),
    revoke: operator.input(z.object({ id: z.string().min(1) })).mutation(({ ctx, input }) => run(() => revokeApiKey(ctx.deps.db, input.id, ctx.deps.keyCache))),
  }),
  node: t.router({
    list: operator.query(({ ctx }) => run(() => listNodes(ctx.deps))),
    /** No new sessions go to the node; its running sessions finish. */
    drain: operator.input(z.object({ id: z.string().min(1) })).mutation(({ ctx, input }) => run(() => drainNode(ctx.deps, input.id))),
  }),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
