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
    // In-flight requests finish (a launcher's last report) before the database closes.
    forceCloseConnections: 'idle',
  });

  // The Browserbase SDK sends `content-type: application/json` with an empty body on some calls
  // (contexts.update): an empty body is no body, not malformed JSON.
  // Fastify's own parser keeps its __proto__/constructor poisoning protection.
  const strictJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    strictJson(req, text, (err, parsed) => {
      if (err) done(Object.assign(new Error(`malformed JSON body: ${err.message}`), { statusCode: 400 }), undefined);
      else done(null, parsed);
    });
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof ServiceError) {
      reply.headers(err.headers);
      return reply.code(err.status).send({ success: false, message: err.message });
    }
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      // curl -d sends form encoding unless told otherwise: say what to send instead.
      if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return reply.code(415).send({ success: false, message: `unsupported Content-Type ${req.headers['content-type'] ?? '(none)'}: send the body as JSON with Content-Type: application/json` });
      }
      const message = e.message ?? 'bad request';
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
