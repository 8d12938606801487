// Live-view shares: short-lived tokens that let anyone holding one watch a running session's
// browser. Frames come from the node agent's screencast (POSTed to the share's frame route) or
// from the header-token ingest route, and fan out to the share page's viewers.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { ShareCreated } from '../../../schema/runtime.ts';
import type { RuntimeSettings } from '../../../schema/settings/settings.ts';
import type { Clock } from '../../deps.ts';
import type { Db } from '../../db/client.ts';
import { Conflict, Forbidden, LimitReached, NotFound } from '../../errors.ts';
import type { EventBus } from '../../events/bus.ts';
import type { SseStream } from '../sse.ts';

/** The reference choices: 18 random bytes, 12 minutes (2-30), at most 240 active. */
export const SHARE_TOKEN_BYTES = 18;
export const MAX_ACTIVE_SHARES = 240;
export const MAX_VIEWERS_PER_SHARE = 16;
/** A viewer this far behind skips frames instead of queueing them. */
const VIEWER_BACKLOG_LIMIT = 2 * 1024 * 1024;
const WATCHABLE = ['READY', 'ACTIVE', 'RUNNING'];

/** A running screencast (agent/screencast.ts), as the share service sees it. */
export interface LiveViewHandle {
  update(params: { quality: number; maxWidth: number; maxHeight: number; maxFps: number }): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a session's screencast toward a frame URL; undefined when no local agent has it. */
export type LiveViewPort = (sessionId: string, spec: { frameUrl: string; quality: number; maxWidth: number; maxHeight: number; maxFps: number }) => Promise<LiveViewHandle | undefined>;

interface Share {
  token: string;
  sessionId: string;
  createdAt: number;
  expiresAt: number;
  timer: NodeJS.Timeout;
  handle?: LiveViewHandle;
  viewers: Set<SseStream>;
  lastFrame?: Buffer;
  frames: number;
}

export interface ShareDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  settings: () => RuntimeSettings;
  /** Base URL the local agent posts frames to. */
  controlUrl: () => string;
  /** The public entrypoint's origin when it is ready. */
  publicUrl: () => string | undefined;
  liveView?: LiveViewPort;
}

export type Shares = ReturnType<typeof createShares>;

export function createShares(deps: ShareDeps) {
  const log = deps.log.child({ component: 'share' });
  const shares = new Map<string, Share>();

  function live(token: string): Share | undefined {
    const s = shares.get(token);
    if (s && s.expiresAt <= deps.clock.now()) {
      void end(s, 'expired');
      return undefined;
    }
    return s;
  }

  function mustLive(token: string): Share {
    const s = live(token);
    if (!s) throw new NotFound('no such share, or it has expired');
    return s;
  }

  async function end(s: Share, reason: string): Promise<void> {
    if (shares.get(s.token) !== s) return;
    shares.delete(s.token);
    clearTimeout(s.timer);
    for (const v of s.viewers) {
      v.send('end', { reason });
      v.close();
    }
    s.viewers.clear();
    log.info({ sessionId: s.sessionId, reason }, 'share ended');
    await s.handle?.stop().catch((err) => log.warn({ err, sessionId: s.sessionId }, 'stopping the screencast failed'));
  }

  const liveViewParams = (settings: RuntimeSettings) => ({
    quality: settings.media.liveView.jpegQuality,
    maxWidth: settings.media.liveView.maxWidth,
    maxHeight: settings.media.liveView.maxHeight,
    maxFps: settings.media.liveView.maxFps,
  });

  // A session that ends takes its shares with it.
  const unsubscribe = deps.bus.subscribe((c) => {
    if (c.to !== 'STOPPED' && c.to !== 'FAILED') return;
    for (const s of shares.values()) if (s.sessionId === c.sessionId) void end(s, 'session ended');
  });

  return {
    /** POST /api/sessions/:id/share */
    async create(sessionId: string, ttlMinutes?: number): Promise<ShareCreated> {
      const settings = deps.settings();
      if (!settings.permissions.liveView.allowSharing) throw new Forbidden('live-view sharing is turned off (settings: permissions.liveView.allowSharing)');
      const session = await deps.db.session.findUnique({ where: { id: sessionId }, select: { status: true } });
      if (!session) throw new NotFound(`session ${sessionId} not found`);
      if (!WATCHABLE.includes(session.status)) throw new Conflict(`session ${sessionId} is ${session.status}: only a running session can be shared`);
      const cap = Math.min(MAX_ACTIVE_SHARES, settings.voice.shareSessions.maxActive);
      for (const s of [...shares.values()]) live(s.token);
      if (shares.size >= cap) throw new LimitReached(`at most ${cap} shares can be active at once (${shares.size} are): stop one or wait for one to expire`);

      const token = crypto.randomBytes(SHARE_TOKEN_BYTES).toString('base64url');
      const minutes = Math.min(30, Math.max(2, ttlMinutes ?? settings.voice.shareSessions.ttlMinutes));
      const now = deps.clock.now();
      const share: Share = {
        token, sessionId, createdAt: now, expiresAt: now + minutes * 60_000, viewers: new Set(), frames: 0,
        timer: setTimeout(() => void end(share, 'expired'), minutes * 60_000),
      };
      share.timer.unref();
      shares.set(token, share);
      if (deps.liveView) {
        try {
          const frameUrl = `${deps.controlUrl()}/api/voice/share-session/${token}/frame`;
          share.handle = await deps.liveView(sessionId, { frameUrl, ...liveViewParams(settings) });
          if (shares.get(token) !== share) await share.handle?.stop();
        } catch (err) {
          log.warn({ err, sessionId }, 'could not start the screencast; frames can still arrive through ingest');
        }
      }
      log.info({ sessionId, expiresAt: new Date(share.expiresAt).toISOString() }, 'share created');
      const publicUrl = deps.publicUrl();
      return {
        token,
        url: `/share/${token}`,
        publicUrl: publicUrl ? `${publicUrl}/share/${token}` : null,
        sessionId,
        expiresAt: new Date(share.expiresAt).toISOString(),
      };
    },

    /** Whether the token opens a live share (the share page). */
    exists: (token: string): boolean => live(token) !== undefined,

    /** A frame for one share (the agent's screencast, or any holder of the token). */
    frame(token: string, jpeg: Buffer): { viewers: number } {
      const s = mustLive(token);
      return { viewers: fanOut(s, jpeg) };
    },

    /** A frame for every share of a session (header-token ingest); 404 when none is active. */
    ingest(sessionId: string, jpeg: Buffer): { shares: number; viewers: number } {
      const targets = [...shares.values()].filter((s) => s.sessionId === sessionId && live(s.token));
      if (targets.length === 0) throw new NotFound(`no active share for session ${sessionId}`);
      return { shares: targets.length, viewers: targets.reduce((n, s) => n + fanOut(s, jpeg), 0) };
    },

    async stop(token: string): Promise<void> {
      await end(mustLive(token), 'stopped');
    },

    /** Adds a viewer stream; the newest frame is sent at once. */
    watch(token: string, stream: SseStream): void {
      const s = mustLive(token);
      if (s.viewers.size >= MAX_VIEWERS_PER_SHARE) throw new LimitReached(`at most ${MAX_VIEWERS_PER_SHARE} viewers per share`);
      s.viewers.add(stream);
      void stream.closed.then(() => s.viewers.delete(stream));
      stream.send('share', { sessionId: s.sessionId, expiresAt: new Date(s.expiresAt).toISOString() });
      if (s.lastFrame) stream.send('frame', s.lastFrame.toString('base64'));
    },

    /** Applies new live-view settings to running screencasts. */
    async reconcile(settings: RuntimeSettings): Promise<void> {
      const params = liveViewParams(settings);
      const failures: string[] = [];
      for (const s of shares.values()) {
        await s.handle?.update(params).catch((err: Error) => failures.push(`${s.sessionId}: ${err.message}`));
      }
      if (failures.length) throw new Error(`live view not updated for ${failures.join(', ')}`);
    },

    active: (): number => shares.size,

    async close(): Promise<void> {
      unsubscribe();
      await Promise.all([...shares.values()].map((s) => end(s, 'server stopping')));
    },
  };

  function fanOut(s: Share, jpeg: Buffer): number {
    s.lastFrame = jpeg;
    s.frames += 1;
    const data = jpeg.toString('base64');
    let sent = 0;
    for (const v of s.viewers) {
      if (v.backlog() > VIEWER_BACKLOG_LIMIT) continue;
      v.send('frame', data);
      sent += 1;
    }
    return sent;
  }
}
