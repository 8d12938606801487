// The one HTTP listener: /v1 and API-mode REST, GraphQL, tRPC; one error shape for REST.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ServiceError } from './errors.ts';

export function createHttp(log: Logger): FastifyInstance {
  const app: FastifyInstance = Fastify({
    // Per-request lines are info; the http logger keeps warnings and errors only.
    loggerInstance: log.child({ component: 'http' }, { level: log.levelVal > 40 ? log.level : 'warn' }) as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    return503OnClosing: true,
    forceCloseConnections: true,
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof ServiceError) {
      reply.headers(err.headers);
      return reply.code(err.status).send({ success: false, message: err.message });
    }
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      const message = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/.test(e.message ?? '')
        ? `malformed JSON body: ${e.message}`
        : e.message ?? 'bad request';
      return reply.code(e.statusCode).send({ success: false, message });
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send({ success: false, message: 'internal server error; see the server log' });
  });

  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ success: false, message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );
  return app;
}
