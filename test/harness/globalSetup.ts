// Creates a fresh database for this test run, applies the migrations, and drops it afterwards.
import pg from 'pg';
import pino from 'pino';
import { migrate } from '../../server/db/migrate.ts';
import { TEST_DB_ADMIN_URL, testDatabaseUrl } from './db.ts';

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_DB_ADMIN_URL });
  try {
    await c.connect();
  } catch (err) {
    throw new Error(`the tests need PostgreSQL at ${TEST_DB_ADMIN_URL} (set TEST_DATABASE_URL): ${(err as Error).message}`);
  }
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export default async function setup() {
  const name = `caravan_test_${process.pid}_${Date.now().toString(36)}`;
  // Workers are forked after global setup and inherit this.
  process.env.CARAVAN_TEST_DB = name;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  await migrate(testDatabaseUrl(), pino({ level: 'silent' }));
  return async () => {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
}
