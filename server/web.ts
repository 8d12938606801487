// Serves the dashboard (web/, built by `vite build` into web/dist) at `/`: hashed assets under
// /assets/ with long caching, and index.html for every client route (the SPA's own router takes
// it from there). These are `ui` routes for the runtime's access hook: operators only, never on
// the tunnel host; a browser without a session gets the login page first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export const WEB_DIST = fileURLToPath(new URL('../web/dist', import.meta.url));

/** The client routes of web/src/App.tsx; each answers with index.html. */
export const CLIENT_ROUTES = ['/', '/session/:id', '/projects', '/nodes', '/settings', '/login'];

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const notBuilt = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Caravan</title></head>
<body style="font:15px system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1rem">
<h1>The dashboard is not built</h1><p>Run <code>npm run build:web</code> (it also runs on <code>npm ci</code>), then reload.
The APIs (<code>/v1</code>, <code>/graphql</code>, <code>/api</code>) work without it.</p></body></html>`;

export function registerWeb(app: FastifyInstance, dist: string = WEB_DIST): void {
  const indexFile = path.join(dist, 'index.html');
  const assets = path.join(dist, 'assets');
  if (fs.existsSync(assets)) {
    void app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      index: false,
      wildcard: true,
      // File names carry their content hash.
      immutable: true,
      maxAge: '365d',
    });
  }
  for (const url of CLIENT_ROUTES) {
    app.get(url, { config: { access: 'ui' } }, async (_req, reply) => {
      reply.header('cache-control', 'no-store').header('content-type', 'text/html; charset=utf-8');
      let html: string;
      try {
        html = await fs.promises.readFile(indexFile, 'utf8');
      } catch {
        return reply.code(503).send(notBuilt);
      }
      return reply
        .header('content-security-policy', CSP)
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'same-origin')
        .header('x-content-type-options', 'nosniff')
        .send(html);
    });
  }
}
