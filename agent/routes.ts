// In-memory registry of this node's sessions: where each browser listens, who is attached, and the
// ATTACHED / IDLE / BYTES signals that follow from it.
import type { Logger } from 'pino';
import type { NodeSignal, RouteRegistration } from '../schema/agent.ts';

export const BYTES_FLUSH_MS = 5_000;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface RouteRegistryOptions {
  idleGraceMs: number;
  signals: (list: NodeSignal[]) => Promise<void>;
  log: Logger;
  timers?: Timers;
  flushEveryMs?: number;
}

/** A client connection (CDP websocket, WebDriver session) attached to a session's browser. */
export interface AttachedClient {
  /** Detaches: samples the meter a last time, may start the idle grace, flushes bytes. */
  detach(): void;
}

export interface ClientOptions {
  /** Cumulative bytes this client has moved (both directions); sampled at flushes. */
  meter?: () => number;
  /** Called when the route goes away while the client is attached. */
  close?: () => void;
}

export interface Route extends RouteRegistration {
  readonly openClients: number;
  /** Bytes counted for this session since the route was added (flushed or not). */
  readonly totalBytes: number;
}

interface Client extends ClientOptions {
  counted: number;
}

interface Entry {
  reg: RouteRegistration;
  clients: Set<Client>;
  attachedOnce: boolean;
  idleTimer: unknown;
  pendingBytes: number;
  totalBytes: number;
}

export type RouteRegistry = ReturnType<typeof createRouteRegistry>;

export function createRouteRegistry(opts: RouteRegistryOptions) {
  const timers = opts.timers ?? realTimers;
  const flushEveryMs = opts.flushEveryMs ?? BYTES_FLUSH_MS;
  const entries = new Map<string, Entry>();
  const removeListeners: Array<(sessionId: string) => void> = [];
  // Events (ATTACHED, IDLE) and bytes of sessions already removed wait here until sent.
  let queued: NodeSignal[] = [];
  const orphanBytes = new Map<string, number>();
  let flushTimer: unknown;
  let flushing: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  function sample(e: Entry, c: Client): void {
    if (!c.meter) return;
    const now = c.meter();
    const delta = now - c.counted;
    if (delta > 0) {
      c.counted = now;
      e.pendingBytes += delta;
      e.totalBytes += delta;
    }
  }

  function anythingPending(): boolean {
    if (queued.length > 0 || orphanBytes.size > 0) return true;
    for (const e of entries.values()) if (e.pendingBytes > 0 || [...e.clients].some((c) => c.meter)) return true;
    return false;
  }

  function schedule(): void {
    if (flushTimer !== undefined && (stopped || !anythingPending())) {
      timers.clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    if (stopped || flushTimer !== undefined || !anythingPending()) return;
    flushTimer = timers.setTimeout(() => {
      flushTimer = undefined;
      void flush();
      schedule();
    }, flushEveryMs);
  }

  function collect(): { list: NodeSignal[]; bytes: Map<string, number> } {
    const bytes = new Map(orphanBytes);
    orphanBytes.clear();
    for (const [sessionId, e] of entries) {
      for (const c of e.clients) sample(e, c);
      if (e.pendingBytes > 0) bytes.set(sessionId, (bytes.get(sessionId) ?? 0) + e.pendingBytes);
      e.pendingBytes = 0;
    }
    const list: NodeSignal[] = [...queued];
    queued = [];
    for (const [sessionId, proxyBytes] of bytes) list.push({ kind: 'BYTES', sessionId, proxyBytes });
    return { list, bytes };
  }

  async function sendOnce(): Promise<void> {
    const { list, bytes } = collect();
    if (list.length === 0) return;
    try {
      await opts.signals(list);
    } catch (err) {
      opts.log.warn({ err, count: list.length }, 'sending node signals failed; retrying at the next flush');
      // Events go back to the front of the queue; bytes are added back to their session.
      queued = [...list.filter((s) => s.kind !== 'BYTES'), ...queued];
      for (const [sessionId, n] of bytes) {
        const e = entries.get(sessionId);
        if (e) e.pendingBytes += n;
        else orphanBytes.set(sessionId, (orphanBytes.get(sessionId) ?? 0) + n);
      }
    }
  }

  /** Sends everything pending now. Concurrent calls coalesce into at most one more round. */
  function flush(): Promise<void> {
    if (flushing) {
      again = true;
      return flushing;
    }
    flushing = (async () => {
      do {
        again = false;
        await sendOnce();
      } while (again);
    })().finally(() => {
      flushing = undefined;
      schedule();
    });
    return flushing;
  }

  function emit(signal: NodeSignal): void {
    queued.push(signal);
    void flush();
  }

  function cancelIdle(e: Entry): void {
    if (e.idleTimer !== undefined) {
      timers.clearTimeout(e.idleTimer);
      e.idleTimer = undefined;
    }
  }

  function view(e: Entry): Route {
    return { ...e.reg, openClients: e.clients.size, totalBytes: e.totalBytes };
  }

  return {
    /** Adds or replaces the route of a session (a launcher may register again). */
    add(reg: RouteRegistration): Route {
      const existing = entries.get(reg.sessionId);
      if (existing) {
        existing.reg = { ...reg };
        return view(existing);
      }
      const e: Entry = { reg: { ...reg }, clients: new Set(), attachedOnce: false, idleTimer: undefined, pendingBytes: 0, totalBytes: 0 };
      entries.set(reg.sessionId, e);
      return view(e);
    },

    /** Removes a route: closes its clients and flushes its bytes. Returns whether it existed. */
    remove(sessionId: string): boolean {
      const e = entries.get(sessionId);
      if (!e) return false;
      cancelIdle(e);
      for (const c of e.clients) sample(e, c);
      entries.delete(sessionId);
      if (e.pendingBytes > 0) orphanBytes.set(sessionId, (orphanBytes.get(sessionId) ?? 0) + e.pendingBytes);
      const clients = [...e.clients];
      e.clients.clear();
      for (const c of clients) c.close?.();
      for (const l of removeListeners) l(sessionId);
      void flush();
      return true;
    },

    get(sessionId: string): Route | undefined {
      const e = entries.get(sessionId);
      return e ? view(e) : undefined;
    },

    list(): Route[] {
      return [...entries.values()].map(view);
    },

    /** Registers a client on a session; undefined when the session has no route. */
    attach(sessionId: string, client: ClientOptions = {}): AttachedClient | undefined {
      const e = entries.get(sessionId);
      if (!e) return undefined;
      const c: Client = { ...client, counted: client.meter?.() ?? 0 };
      e.clients.add(c);
      cancelIdle(e);
      if (!e.attachedOnce) {
        e.attachedOnce = true;
        emit({ kind: 'ATTACHED', sessionId });
      }
      schedule();
      let detached = false;
      return {
        detach() {
          if (detached) return;
          detached = true;
          const current = entries.get(sessionId);
          if (current !== e || !e.clients.delete(c)) return; // the route went away first
          sample(e, c);
          if (e.clients.size === 0 && !e.reg.keepAlive && !stopped) {
            e.idleTimer = timers.setTimeout(() => {
              e.idleTimer = undefined;
              if (entries.get(sessionId) === e && e.clients.size === 0) emit({ kind: 'IDLE', sessionId });
            }, opts.idleGraceMs);
          }
          void flush();
        },
      };
    },

    /** Counts bytes moved for a session outside an attached client's meter (e.g. WebDriver relay). */
    addBytes(sessionId: string, n: number): void {
      const e = entries.get(sessionId);
      if (!e || n <= 0) return;
      e.pendingBytes += n;
      e.totalBytes += n;
      schedule();
    },

    onRemove(listener: (sessionId: string) => void): void {
      removeListeners.push(listener);
    },

    flush,

    /** Stops timers and sends what is pending one last time. */
    async stop(): Promise<void> {
      stopped = true;
      if (flushTimer !== undefined) timers.clearTimeout(flushTimer);
      flushTimer = undefined;
      for (const e of entries.values()) cancelIdle(e);
      await flush();
    },
  };
}
