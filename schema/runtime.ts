// Wire contracts of the operator runtime's /api routes (other than settings, in schema/settings/):
// the public entrypoint state, activity events, live-view shares, login and frames.
import { z } from 'zod';
import { SessionChange } from './states.ts';

export const PublicHttpsStatus = z.enum(['disabled', 'idle', 'starting', 'ready', 'error', 'stopped']);
export type PublicHttpsStatus = z.infer<typeof PublicHttpsStatus>;

/** GET /api/public-https, and `runtime.publicHttps` in GET /api/stats. Empty strings and pid 0
 *  mean "not known yet" / "none". */
export const PublicHttpsState = z.object({
  enabled: z.boolean(),
  provider: z.string(),
  status: PublicHttpsStatus,
  targetUrl: z.string(),
  publicUrl: z.string(),
  pid: z.number().int(),
  startedAt: z.string(),
  lastError: z.string(),
});
export type PublicHttpsState = z.infer<typeof PublicHttpsState>;

/** Runtime actions of the action log (also streamed on /api/activity/events). */
export const RuntimeActionName = z.enum(['public_https_entrypoint_starting', 'public_https_entrypoint_ready', 'bot_error']);
export const RuntimeAction = z.object({
  type: z.literal('action'),
  name: RuntimeActionName,
  category: z.enum(['bot_runtime', 'error']),
  at: z.string(),
  message: z.string(),
  detail: z.record(z.string(), z.unknown()),
});
export type RuntimeAction = z.infer<typeof RuntimeAction>;

export const SessionActivity = SessionChange.extend({
  type: z.literal('session'),
  at: z.string(),
});
export type SessionActivity = z.infer<typeof SessionActivity>;

/** One `data:` of GET /api/activity/events (the SSE `event:` is the `type`). */
export const ActivityEvent = z.discriminatedUnion('type', [SessionActivity, RuntimeAction]);
export type ActivityEvent = z.infer<typeof ActivityEvent>;

/** POST /api/sessions/:id/share body. */
export const ShareCreateBody = z
  .object({ ttlMinutes: z.number().int().min(2).max(30).optional() })
  .strict();

/** POST /api/sessions/:id/share reply. */
export const ShareCreated = z.object({
  token: z.string(),
  /** Relative: the share page on whichever origin the caller uses (local or the tunnel). */
  url: z.string(),
  /** The absolute URL on the public entrypoint, when it is ready. */
  publicUrl: z.string().nullable(),
  sessionId: z.string(),
  expiresAt: z.string(),
});
export type ShareCreated = z.infer<typeof ShareCreated>;

/** POST /api/auth/session body. */
export const AuthSessionBody = z.object({ token: z.string().min(1) }).strict();

/** A frame sent as JSON (the other form is the raw JPEG with Content-Type: image/jpeg). */
export const FrameJson = z.object({
  /** Base64 JPEG. */
  data: z.string().min(4),
  /** Required by POST /api/voice/stream-ingest/frame (or the x-session-id header). */
  sessionId: z.string().min(1).optional(),
});
