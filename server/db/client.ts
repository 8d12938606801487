// Creates the Prisma client on the pg driver adapter (no native query engine).
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from 'pino';
import { PrismaClient } from '../../prisma/generated/client.ts';

export type Db = PrismaClient;
export { Prisma } from '../../prisma/generated/client.ts';
export type { Session as SessionRow, Project as ProjectRow, SessionEvent as SessionEventRow, Node as NodeRow } from '../../prisma/generated/client.ts';

export function createDb(connectionString: string, log: Logger, max = 10): { db: Db; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString, max });
  // An idle connection that the server drops (restart, failover) must not crash the process;
  // the pool replaces it on the next query.
  pool.on('error', (err) => log.warn({ err: err.message }, 'database connection lost'));
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    db,
    async close() {
      await db.$disconnect();
      // pool.end() waits for every checked-out connection; one left inside an interactive
      // transaction by a request cut off at shutdown would wait forever.
      await Promise.race([pool.end(), new Promise((r) => setTimeout(r, 2_000).unref())]);
    },
  };
}
