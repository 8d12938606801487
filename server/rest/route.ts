// The shape of one REST route: method, path, auth and handler side by side.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyAuth } from '../auth/apiKeys.ts';
import type { Deps } from '../deps.ts';

export interface RouteContext {
  deps: Deps;
  req: FastifyRequest;
  reply: FastifyReply;
  /** Present on routes with auth 'apiKey'. */
  auth: KeyAuth;
  params: Record<string, string>;
  /** The x-svc-project-id header, when sent. */
  projectHeader: string | undefined;
}

export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  auth: 'apiKey' | 'none';
  /** Success status (default 200). */
  status?: number;
  handler(ctx: RouteContext): Promise<unknown>;
}

/** The spec's wrapped single-object reply; the fields are also at the top level, where the
 *  Browserbase SDK and Stagehand read them. */
export const wrapped = <T extends object>(data: T) => ({ success: true, data, ...data });
