// The activity feed: session lifecycle changes (from the event bus) and runtime actions (the
// action log), each with an id that lets a reconnecting client resume. A bounded ring holds the
// newest entries; a client whose id is older than the ring, or from another process, gets the
// session changes it missed re-read from the SessionEvent table.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { ActivityEvent, RuntimeAction, SessionActivity } from '../../../schema/runtime.ts';
import { InternalStatus } from '../../../schema/states.ts';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../deps.ts';
import type { EventBus } from '../../events/bus.ts';

export const RING_SIZE = 1000;

export interface ActivityEntry {
  /** `<boot>.<n>.<seq>`: this process, its entry counter, the newest session seq so far. */
  id: string;
  n: number;
  event: ActivityEvent;
}

export interface ActivitySink {
  /** Runtime actions may have been missed (resumed from the database). */
  gap(): void;
  entry(e: ActivityEntry): void;
}

export interface ActivityFeed {
  start(): Promise<void>;
  action(a: Omit<RuntimeAction, 'type' | 'at'>): void;
  /** Delivers to `sink` what the client missed since `lastEventId`, then every new entry, in
   *  order and without duplicates; resolves to the unsubscribe function. */
  resume(lastEventId: string | undefined, sink: ActivitySink): Promise<() => void>;
  subscribers(): number;
  close(): void;
}

export function activityFeed(opts: { db: Db; bus: EventBus; clock: Clock; log: Logger; ringSize?: number }): ActivityFeed {
  const boot = crypto.randomBytes(4).toString('hex');
  const size = opts.ringSize ?? RING_SIZE;
  const ring: ActivityEntry[] = [];
  const listeners = new Set<(e: ActivityEntry) => void>();
  let n = 0;
  let seq = 0n;
  let unsubscribeBus: (() => void) | undefined;

  function push(event: ActivityEvent): ActivityEntry {
    if (event.type === 'session' && BigInt(event.seq) > seq) seq = BigInt(event.seq);
    n += 1;
    const entry = { id: `${boot}.${n}.${seq}`, n, event };
    ring.push(entry);
    if (ring.length > size) ring.shift();
    for (const fn of listeners) fn(entry);
    return entry;
  }

  function parse(id: string | undefined): { boot: string; n: number; seq: bigint } | undefined {
    const m = /^([0-9a-f]{8})\.(\d{1,15})\.(\d{1,20})$/.exec(id ?? '');
    return m ? { boot: m[1]!, n: Number(m[2]), seq: BigInt(m[3]!) } : undefined;
  }

  async function fromDatabase(after: bigint): Promise<ActivityEntry[]> {
    const rows = await opts.db.sessionEvent.findMany({ where: { seq: { gt: after } }, orderBy: { seq: 'asc' }, take: size });
    return rows.map((r) => {
      const event: SessionActivity = {
        type: 'session', seq: r.seq.toString(), sessionId: r.sessionId, projectId: r.projectId,
        from: r.from ? InternalStatus.parse(r.from) : null, to: InternalStatus.parse(r.to), reason: r.reason, at: r.createdAt.toISOString(),
      };
      return { id: `${boot}.${n}.${r.seq}`, n, event };
    });
  }

  return {
    async start() {
      const last = await opts.db.sessionEvent.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true } });
      if (last && last.seq > seq) seq = last.seq;
      unsubscribeBus = opts.bus.subscribe((c) => {
        push({ type: 'session', seq: c.seq, sessionId: c.sessionId, projectId: c.projectId, from: c.from, to: c.to, reason: c.reason, at: new Date(opts.clock.now()).toISOString() });
      });
    },
    action(a) {
      const event: RuntimeAction = { type: 'action', at: new Date(opts.clock.now()).toISOString(), ...a };
      opts.log.info({ action: a.name, category: a.category, ...a.detail }, a.message);
      push(event);
    },
    async resume(lastEventId, sink) {
      const last = parse(lastEventId);
      const oldest = ring[0]?.n ?? n + 1;
      const fn = (e: ActivityEntry) => sink.entry(e);
      if (!lastEventId || (last && last.boot === boot && last.n >= oldest - 1 && last.n <= n)) {
        // Same process and still in the ring (or a fresh client): exact replay, in this tick.
        if (last) for (const e of ring) if (e.n > last.n) sink.entry(e);
        listeners.add(fn);
        return () => listeners.delete(fn);
      }
      // Another process or fallen out of the ring: live entries are held back while the
      // database is read, then the ones already replayed are skipped.
      const held: ActivityEntry[] = [];
      const hold = (e: ActivityEntry) => held.push(e);
      listeners.add(hold);
      let entries: ActivityEntry[];
      try {
        entries = await fromDatabase(last?.seq ?? seq);
      } finally {
        listeners.delete(hold);
      }
      const maxSeq = entries.reduce((m, e) => (e.event.type === 'session' && BigInt(e.event.seq) > m ? BigInt(e.event.seq) : m), -1n);
      sink.gap();
      for (const e of entries) sink.entry(e);
      for (const e of held) if (e.event.type !== 'session' || BigInt(e.event.seq) > maxSeq) sink.entry(e);
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    subscribers: () => listeners.size,
    close() {
      unsubscribeBus?.();
      listeners.clear();
    },
  };
}
