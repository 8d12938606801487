// The collaborators every use case receives, built once in server/main.ts.
import type { Logger } from 'pino';
import type { Db } from './db/client.ts';
import type { EventBus } from './events/bus.ts';
import type { Scheduler } from './scheduler/types.ts';
import type { SecretSource } from '../schema/token.ts';
import type { Config } from './config.ts';
import type { ObjectStore } from './storage/objectStore.ts';
import type { KeyCache } from './auth/apiKeys.ts';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Deps {
  db: Db;
  bus: EventBus;
  scheduler: Scheduler;
  secrets: SecretSource;
  store: ObjectStore;
  /** Recent API-key lookups (optional: without it every request reads the key). */
  keyCache?: KeyCache;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'SERVICE_MAX_SESSION_TIMEOUT' | 'SERVICE_READY_WAIT_MS' | 'SESSION_RECORD_RETENTION' | 'CONTEXT_MAX_BYTES' | 'CONTEXT_UPLOAD_WINDOW'>;
  /** Base URL launchers and agents use to reach this control plane. */
  controlUrl: () => string;
}
