// Where the tests' PostgreSQL is: TEST_DATABASE_URL, or the machine's server on 127.0.0.1:5432.
// Each run gets its own database (named by globalSetup), so that runs never disturb each other.
export const TEST_DB_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

export function testDatabaseName(): string {
  const name = process.env.CARAVAN_TEST_DB;
  if (!name) throw new Error('CARAVAN_TEST_DB is unset: run the tests through vitest (test/harness/globalSetup.ts)');
  return name;
}

export function testDatabaseUrl(): string {
  const url = new URL(TEST_DB_ADMIN_URL);
  url.pathname = `/${testDatabaseName()}`;
  return url.toString();
}
