// Creates a fresh `caravan_test` database once per run and applies the migrations.
import pg from 'pg';
import pino from 'pino';
import { migrate } from '../../server/db/migrate.ts';
import { TEST_DB_ADMIN_URL, testDatabaseUrl } from './db.ts';

export default async function setup() {
  const admin = new pg.Client({ connectionString: TEST_DB_ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`the tests need PostgreSQL at ${TEST_DB_ADMIN_URL} (set TEST_DATABASE_URL): ${(err as Error).message}`);
  }
  await admin.query('DROP DATABASE IF EXISTS caravan_test WITH (FORCE)');
  await admin.query('CREATE DATABASE caravan_test');
  await admin.end();
  await migrate(testDatabaseUrl(), pino({ level: 'silent' }));
}
