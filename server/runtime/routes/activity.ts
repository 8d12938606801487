// GET /api/activity/events: server-sent events of session changes (`event: session`) and runtime
// actions (`event: action`), each with an `id:`; a client resumes with Last-Event-ID (header, or
// ?lastEventId= for the first connect). `event: gap` says runtime actions may have been missed.
import type { RuntimeRoute } from './route.ts';

export const activityRoutes: RuntimeRoute[] = [
  {
    method: 'GET', url: '/api/activity/events', access: 'admin',
    handler: async ({ rt, req, reply }) => {
      const header = req.headers['last-event-id'];
      const query = (req.query as Record<string, unknown> | undefined)?.lastEventId;
      const lastEventId = (typeof header === 'string' && header) || (typeof query === 'string' && query) || undefined;
      const stream = rt.sse.open(reply, { heartbeatMs: rt.heartbeatMs });
      const unsubscribe = await rt.activity.resume(lastEventId, {
        gap: () => stream.send('gap', { reason: 'resumed from the session change table: runtime actions before this point may be missing' }),
        entry: (e) => stream.send(e.event.type, e.event, e.id),
      });
      void stream.closed.then(unsubscribe);
      return reply;
    },
  },
];
