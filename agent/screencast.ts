// Live view of a session's browser: CDP Page.startScreencast on the session's newest page,
// through the browser's own loopback CDP port (not the authenticated proxy, so watching neither
// keeps a session alive nor counts as its traffic). Frames go to a sink, at most maxFps a second.
import type { Logger } from 'pino';
import WebSocket from 'ws';

export interface ScreencastParams {
  /** JPEG quality, 10-100. */
  quality: number;
  maxWidth: number;
  maxHeight: number;
  /** Frames per second delivered at most (extra frames are coalesced, the newest wins). */
  maxFps: number;
}

/** What the control plane asks a node agent for: frames of a session's browser, POSTed to
 *  `frameUrl` (the share-session frame route) as `Content-Type: image/jpeg`. */
export interface ScreencastSpec extends ScreencastParams {
  frameUrl: string;
}

/** Returns 'stop' when the receiver no longer wants frames (share ended). */
export type FrameSink = (jpeg: Buffer) => Promise<void | 'stop'>;

export interface ScreencastOptions extends ScreencastParams {
  browserPort: number;
  /** `/devtools/browser/<id>` of the session's browser. */
  browserWsPath: string;
  sink: FrameSink;
  log: Logger;
  /** Called once when the screencast ends for any reason. */
  onEnd?: () => void;
}

export interface Screencast {
  /** Frames handed to the sink so far. */
  readonly delivered: number;
  /** Changes quality/size/rate in place (restarts the CDP screencast). */
  update(params: Partial<ScreencastParams>): Promise<void>;
  stop(): Promise<void>;
}

type Listener = (method: string, params: Record<string, unknown>, sessionId: string | undefined) => void;

/** A minimal CDP connection with flattened target sessions. */
async function connect(url: string): Promise<{ send(method: string, params?: object, sessionId?: string): Promise<Record<string, unknown>>; on(fn: Listener): void; close(): void; closed: Promise<void> }> {
  const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 0;
  const pending = new Map<number, { resolve(v: Record<string, unknown>): void; reject(e: Error): void }>();
  const listeners: Listener[] = [];
  const closed = new Promise<void>((resolve) => ws.once('close', () => {
    for (const p of pending.values()) p.reject(new Error('browser connection closed'));
    pending.clear();
    resolve();
  }));
  ws.on('error', () => undefined);
  ws.on('message', (data) => {
    let msg: { id?: number; result?: Record<string, unknown>; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
    try {
      msg = JSON.parse(data.toString());
    } catch {
      return;
    }
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result ?? {});
    } else if (msg.method) {
      for (const l of listeners) l(msg.method, msg.params ?? {}, msg.sessionId);
    }
  });
  return {
    send(method, params = {}, sessionId) {
      if (ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('browser connection closed'));
      const id = ++nextId;
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    on: (fn) => void listeners.push(fn),
    close: () => ws.close(),
    closed,
  };
}

interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
}

export async function startScreencast(opts: ScreencastOptions): Promise<Screencast> {
  const log = opts.log.child({ component: 'screencast' });
  const cdp = await connect(`ws://127.0.0.1:${opts.browserPort}${opts.browserWsPath}`);
  let params: ScreencastParams = { quality: opts.quality, maxWidth: opts.maxWidth, maxHeight: opts.maxHeight, maxFps: opts.maxFps };
  const pages: string[] = []; // page target ids, oldest first
  let current: { targetId: string; sessionId: string } | undefined;
  let stopped = false;
  let delivered = 0;
  // Coalescing: while a frame is on its way (or too soon after the last), only the newest waits.
  let inFlight = false;
  let waiting: Buffer | undefined;
  let lastSent = 0;
  let timer: NodeJS.Timeout | undefined;

  const end = () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    cdp.close();
    opts.onEnd?.();
  };
  void cdp.closed.then(end);

  function pump(): void {
    if (stopped || inFlight || !waiting) return;
    const wait = lastSent + 1000 / params.maxFps - Date.now();
    if (wait > 0) {
      timer ??= setTimeout(() => {
        timer = undefined;
        pump();
      }, wait);
      return;
    }
    const frame = waiting;
    waiting = undefined;
    inFlight = true;
    lastSent = Date.now();
    opts.sink(frame).then(
      (r) => {
        inFlight = false;
        delivered++;
        if (r === 'stop') end();
        else pump();
      },
      (err) => {
        inFlight = false;
        log.debug({ err }, 'frame delivery failed');
        pump();
      },
    );
  }

  const startCast = (sessionId: string) =>
    cdp.send('Page.startScreencast', { format: 'jpeg', quality: params.quality, maxWidth: params.maxWidth, maxHeight: params.maxHeight, everyNthFrame: 1 }, sessionId);

  /** Watches the newest page: the one a client most recently opened. */
  async function follow(): Promise<void> {
    const targetId = pages.at(-1);
    if (stopped || !targetId || current?.targetId === targetId) return;
    const previous = current;
    current = undefined;
    if (previous) await cdp.send('Target.detachFromTarget', { sessionId: previous.sessionId }).catch(() => undefined);
    try {
      const { sessionId } = (await cdp.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
      current = { targetId, sessionId };
      await cdp.send('Page.enable', {}, sessionId);
      await startCast(sessionId);
    } catch (err) {
      log.debug({ err, targetId }, 'could not watch page');
    }
  }

  cdp.on((method, p, sessionId) => {
    if (method === 'Page.screencastFrame' && sessionId && sessionId === current?.sessionId) {
      void cdp.send('Page.screencastFrameAck', { sessionId: p.sessionId }, sessionId).catch(() => undefined);
      waiting = Buffer.from(String(p.data), 'base64');
      pump();
    } else if (method === 'Target.targetCreated' || method === 'Target.targetInfoChanged') {
      const info = p.targetInfo as TargetInfo;
      if (info.type === 'page' && !pages.includes(info.targetId)) {
        pages.push(info.targetId);
        void follow();
      }
    } else if (method === 'Target.targetDestroyed') {
      const i = pages.indexOf(String(p.targetId));
      if (i >= 0) pages.splice(i, 1);
      if (current?.targetId === p.targetId) {
        current = undefined;
        void follow();
      }
    }
  });

  // Existing pages first (oldest first as far as CDP tells), then every new one as it appears.
  const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: TargetInfo[] };
  for (const t of targetInfos) if (t.type === 'page' && !pages.includes(t.targetId)) pages.push(t.targetId);
  await cdp.send('Target.setDiscoverTargets', { discover: true });
  await follow();

  return {
    get delivered() {
      return delivered;
    },
    async update(next) {
      params = { ...params, ...next };
      if (!current || stopped) return;
      await cdp.send('Page.stopScreencast', {}, current.sessionId).catch(() => undefined);
      await startCast(current.sessionId);
    },
    async stop() {
      if (stopped) return;
      if (current) await cdp.send('Page.stopScreencast', {}, current.sessionId).catch(() => undefined);
      end();
    },
  };
}

/** Posts each frame as image/jpeg; a 404 (share gone or expired) ends the screencast. */
export function httpFrameSink(frameUrl: string): FrameSink {
  return async (jpeg) => {
    const res = await fetch(frameUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(jpeg), signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 404 || res.status === 410) return 'stop';
  };
}
