// Wire contracts between the browser launcher, the node agent and the control plane.
import { z } from 'zod';

export const Viewport = z.object({
  width: z.number().int().min(100).max(7680),
  height: z.number().int().min(100).max(4320),
});
export type Viewport = z.infer<typeof Viewport>;

/** Launcher -> its node agent: `PUT /routes/:sessionId` on the agent's loopback control port,
 *  `Authorization: Bearer <launcher token>`. `DELETE /routes/:sessionId` removes it. */
export const RouteRegistration = z.object({
  sessionId: z.string().min(1),
  /** The browser's CDP port on 127.0.0.1. */
  browserPort: z.number().int().min(1).max(65535),
  /** Path of the browser-level websocket, `/devtools/browser/<uuid>`. */
  browserWsPath: z.string().startsWith('/devtools/browser/'),
  keepAlive: z.boolean(),
  /** Chromium's pid, so the agent can kill it if the launcher vanishes. */
  browserPid: z.number().int().positive().optional(),
});
export type RouteRegistration = z.infer<typeof RouteRegistration>;

/** What a launcher tells about its started browser (READY report, IPC `ready`). */
export const BrowserInfo = z.object({
  port: z.number().int(),
  wsPath: z.string(),
  version: z.string().optional(),
  /** Chromium's pid and profile dir on the node (for operators and cleanup checks). */
  pid: z.number().int().optional(),
  userDataDir: z.string().optional(),
});
export type BrowserInfo = z.infer<typeof BrowserInfo>;

/** Launcher -> control plane (GraphQL `reportSession`), with the launcher token. */
export const SessionReport = z.object({
  sessionId: z.string().min(1),
  status: z.enum(['READY', 'STOPPED', 'FAILED']),
  nodeId: z.string().min(1).optional(),
  message: z.string().max(2000).optional(),
  browser: BrowserInfo.optional(),
});
export type SessionReport = z.infer<typeof SessionReport>;

/** Node agent -> control plane (GraphQL `reportNodeSignals`), with the node token. */
export const NodeSignal = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ATTACHED'), sessionId: z.string().min(1) }),
  z.object({ kind: z.literal('IDLE'), sessionId: z.string().min(1) }),
  z.object({ kind: z.literal('BYTES'), sessionId: z.string().min(1), proxyBytes: z.number().int().nonnegative() }),
]);
export type NodeSignal = z.infer<typeof NodeSignal>;

/** Scheduler -> waiting launcher (IPC message): the session it now serves. A pooled launcher's
 *  browser is already up (no context then); a standby launcher starts its browser after this. */
export const SessionAssignment = z.object({
  type: z.literal('assign'),
  sessionId: z.string().min(1),
  launcherToken: z.string().min(1),
  keepAlive: z.boolean(),
  viewport: Viewport.optional(),
  context: z.object({ getUrl: z.string().optional(), putUrl: z.string().optional(), maxBytes: z.number().int().positive() }).optional(),
});
export type SessionAssignment = z.infer<typeof SessionAssignment>;

/** Standby launcher -> scheduler (IPC message): it is listening for its assignment. */
export const StandbyReady = z.object({ type: z.literal('standby') });

/** Launcher -> local scheduler (IPC message) instead of the route PUT and the READY report:
 *  the scheduler registers the route with its in-process agent and records READY. */
export const LocalReady = z.object({ type: z.literal('ready'), sessionId: z.string().min(1), browser: BrowserInfo });
export type LocalReady = z.infer<typeof LocalReady>;

/** Local scheduler -> launcher: whether the READY it sent was recorded. */
export const LocalReadyAck = z.object({ type: z.literal('ready-ack'), accepted: z.boolean(), message: z.string().optional() });
export type LocalReadyAck = z.infer<typeof LocalReadyAck>;

/** Pooled launcher -> scheduler (IPC message): its browser is up and can take a session. */
export const PoolReady = z.object({ type: z.literal('pool-ready'), pid: z.number().int() });

/** CDP proxy -> its relay spawner (IPC, each with a socket handle): the two halves of an
 *  upgraded connection, its handshake already answered. */
export const SpawnerRequest = z.discriminatedUnion('type', [
  z.object({ type: z.literal('client'), id: z.number().int() }),
  z.object({ type: z.literal('upstream'), id: z.number().int() }),
]);
export type SpawnerRequest = z.infer<typeof SpawnerRequest>;

/** Relay spawner -> CDP proxy: loaded; a relay's shell started; a relay ended (socat's bytes). */
export const SpawnerReport = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('started'), id: z.number().int(), pid: z.number().int() }),
  z.object({ type: z.literal('ended'), id: z.number().int(), wchar: z.number().int().optional(), failed: z.string().optional(), stderr: z.string().optional() }),
]);
export type SpawnerReport = z.infer<typeof SpawnerReport>;
