// Applies the committed SQL migrations in prisma/migrations in order, once each, under an
// advisory lock so that replicas starting together do not race (see docs/decisions.md).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Logger } from 'pino';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');
const LOCK_KEY = 4242_0001;

export async function migrate(url: string, log: Logger): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_caravan_migrations" (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM "_caravan_migrations"')).rows.map((r) => r.name));
    const names = (await fs.readdir(MIGRATIONS_DIR)).filter((n) => /^\d{4}_/.test(n)).sort();
    for (const name of names) {
      if (done.has(name)) continue;
      const sql = await fs.readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO "_caravan_migrations"(name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(err as Error).message}`);
      }
      applied.push(name);
      log.info({ migration: name }, 'applied migration');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
  return applied;
}
