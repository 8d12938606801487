// The shape of one operator-runtime route: method, path, access kind and handler side by side.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessKind } from '../access.ts';
import type { Runtime } from '../runtime.ts';

export interface RuntimeContext {
  rt: Runtime;
  req: FastifyRequest;
  reply: FastifyReply;
  params: Record<string, string>;
}

export interface RuntimeRoute {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  /** Read by the access hook (server/runtime/access.ts). */
  access: Exclude<AccessKind, 'own'>;
  /** Public frame routes: rate limited per client and path; `frame` also checks the declared size. */
  ingress?: 'frame' | 'limited';
  handler(ctx: RuntimeContext): Promise<unknown>;
}
