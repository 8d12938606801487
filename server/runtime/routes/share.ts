// Live-view sharing: the operator creates a share; frames arrive on the tokenized frame route (the
// node agent's screencast) or the header-token ingest route; viewers open /share/:token, whose
// page streams /share/:token/frames. Frames are JPEG: the raw bytes with Content-Type
// image/jpeg (or application/octet-stream), or JSON { data: <base64>, sessionId? }.
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { FrameJson, ShareCreateBody } from '../../../schema/runtime.ts';
import { Invalid, ServiceError, Unavailable } from '../../errors.ts';
import { dashboardHeaderValid } from '../access.ts';
import { sameSecret } from '../dashboardSession.ts';
import { sharePage } from '../share/page.ts';
import type { RuntimeRoute } from './route.ts';

const TOKEN = /^[A-Za-z0-9_-]{24}$/;

/** The JPEG of a frame request (raw body or JSON), checked for the JPEG start marker. */
function frameOf(req: FastifyRequest): { jpeg: Buffer; sessionId?: string } {
  let jpeg: Buffer;
  let sessionId: string | undefined;
  if (Buffer.isBuffer(req.body)) {
    jpeg = req.body;
  } else {
    const parsed = FrameJson.safeParse(req.body);
    if (!parsed.success) throw new Invalid('send the frame as Content-Type: image/jpeg bytes, or JSON { "data": "<base64 JPEG>" }');
    jpeg = Buffer.from(parsed.data.data, 'base64');
    sessionId = parsed.data.sessionId;
  }
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Invalid('the frame is not a JPEG image');
  return { jpeg, ...(sessionId ? { sessionId } : {}) };
}

/** Unknown, malformed and expired tokens all answer the same 404. */
function token(params: Record<string, string>): string {
  const t = params.token ?? '';
  if (!TOKEN.test(t)) throw new ServiceError(404, 'no such share, or it has expired');
  return t;
}

export const shareRoutes: RuntimeRoute[] = [
  {
    method: 'POST', url: '/api/sessions/:id/share', access: 'admin',
    handler: async ({ rt, req, params, reply }) => {
      const body = ShareCreateBody.safeParse(req.body ?? {});
      if (!body.success) throw new Invalid(`send { "ttlMinutes"?: 2..30 }: ${body.error.issues[0]?.message ?? 'invalid body'}`);
      reply.code(201).header('cache-control', 'no-store');
      return rt.shares.create(params.id!, body.data.ttlMinutes);
    },
  },
  {
    method: 'POST', url: '/api/voice/stream-ingest/frame', access: 'public', ingress: 'frame',
    handler: async ({ rt, req, reply }) => {
      const dashboard = rt.config.DASHBOARD_TOKEN;
      const publicToken = rt.settings.live.current().permissions.ingest.acceptPublicApiToken ? rt.config.PUBLIC_API_TOKEN : undefined;
      if (!dashboard && !publicToken) throw new Unavailable('frame ingest is not configured: set DASHBOARD_TOKEN or PUBLIC_API_TOKEN');
      const sentPublic = req.headers['x-public-api-token'];
      const ok = dashboardHeaderValid(req, dashboard) || (publicToken !== undefined && typeof sentPublic === 'string' && sameSecret(sentPublic, publicToken));
      if (!ok) throw new ServiceError(401, 'send x-dashboard-token or x-public-api-token');
      const frame = frameOf(req);
      const header = req.headers['x-session-id'];
      const query = (req.query as Record<string, unknown> | undefined)?.sessionId;
      const sessionId = frame.sessionId || (typeof header === 'string' && header) || (typeof query === 'string' && query) || undefined;
      if (!sessionId) throw new Invalid('name the session: x-session-id header, ?sessionId= or "sessionId" in the JSON body');
      reply.code(202);
      return { success: true, ...rt.shares.ingest(sessionId, frame.jpeg) };
    },
  },
  {
    method: 'POST', url: '/api/voice/share-session/:token/frame', access: 'public', ingress: 'frame',
    handler: async ({ rt, req, params, reply }) => {
      const t = token(params);
      const { jpeg } = frameOf(req);
      reply.code(202);
      return { success: true, ...rt.shares.frame(t, jpeg) };
    },
  },
  {
    method: 'POST', url: '/api/voice/share-session/:token/stop', access: 'public', ingress: 'limited',
    handler: async ({ rt, params }) => {
      await rt.shares.stop(token(params));
      return { success: true, stopped: true };
    },
  },
  {
    method: 'GET', url: '/share/:token', access: 'public', ingress: 'limited',
    handler: async ({ rt, params, reply }) => {
      const t = token(params);
      if (!rt.shares.exists(t)) throw new ServiceError(404, 'no such share, or it has expired');
      const nonce = crypto.randomBytes(16).toString('base64');
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('x-frame-options', 'DENY')
        .header('content-security-policy', `default-src 'none'; img-src data:; connect-src 'self'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`)
        .send(sharePage(rt.settings.live.current().identity.displayName, nonce));
    },
  },
  {
    // The share page's frame stream: part of the tokenized share page, unlocked by its token only.
    method: 'GET', url: '/share/:token/frames', access: 'public', ingress: 'limited',
    handler: async ({ rt, params, reply }) => {
      const t = token(params);
      if (!rt.shares.exists(t)) throw new ServiceError(404, 'no such share, or it has expired');
      const stream = rt.sse.open(reply, { heartbeatMs: rt.heartbeatMs, headers: { 'referrer-policy': 'no-referrer' } });
      try {
        rt.shares.watch(t, stream);
      } catch (err) {
        stream.send('end', { reason: (err as Error).message });
        stream.close();
      }
      return reply;
    },
  },
];
