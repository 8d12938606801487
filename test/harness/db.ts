// Where the tests' PostgreSQL is: TEST_DATABASE_URL, or the machine's server on 127.0.0.1:5432.
export const TEST_DB_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

export function testDatabaseUrl(): string {
  const url = new URL(TEST_DB_ADMIN_URL);
  url.pathname = '/caravan_test';
  return url.toString();
}
