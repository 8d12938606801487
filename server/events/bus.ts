// The event bus that carries session changes between the code that makes them and the code
// that waits for them: in memory for one process, PostgreSQL LISTEN/NOTIFY across replicas.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import { SessionChange } from '../../schema/states.ts';

export { SessionChange };

export interface EventBus {
  publish(change: SessionChange): Promise<void>;
  /** Calls `fn` for every change; returns the unsubscribe function. */
  subscribe(fn: (change: SessionChange) => void): () => void;
  close(): Promise<void>;
}

export function memoryBus(): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(change) {
      emitter.emit('change', change);
    },
    subscribe(fn) {
      emitter.on('change', fn);
      return () => emitter.off('change', fn);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

const CHANNEL = 'caravan_session_change';

/** LISTEN/NOTIFY on one dedicated connection; reconnects when it drops. */
export async function postgresBus(url: string, log: Logger): Promise<EventBus> {
  const local = memoryBus();
  let client: pg.Client | undefined;
  let closed = false;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (msg) => {
      const parsed = SessionChange.safeParse(JSON.parse(msg.payload ?? 'null'));
      if (parsed.success) void local.publish(parsed.data);
    });
    c.on('error', (err) => {
      log.warn({ err }, 'event bus connection lost; reconnecting');
      client = undefined;
      if (!closed) setTimeout(() => void connect().catch((e) => log.error({ err: e }, 'event bus reconnect failed')), 500).unref();
    });
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
  };
  await connect();
  const notifier = new pg.Pool({ connectionString: url, max: 2 });
  notifier.on('error', (err) => log.warn({ err: err.message }, 'event bus connection lost'));
  return {
    async publish(change) {
      await notifier.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(change)]);
    },
    subscribe: local.subscribe,
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
      await notifier.end();
      await local.close();
    },
  };
}
