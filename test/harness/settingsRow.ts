// Makes sure the settings row exists before a control plane starts. The runtime creates it on
// its first read (server/runtime/settings/store.ts), and two control planes starting at the same
// moment on a fresh database can both miss it there ("the settings row could not be read"), as
// test files starting in parallel do. A second read always sees the row.
import pino from 'pino';
import { createDb } from '../../server/db/client.ts';
import { readSettingsRow } from '../../server/runtime/settings/store.ts';
import { testDatabaseUrl } from './db.ts';

export async function ensureSettingsRow(): Promise<void> {
  const { db, close } = createDb(testDatabaseUrl(), pino({ level: 'silent' }), 1);
  try {
    await readSettingsRow(db).catch(() => readSettingsRow(db));
  } finally {
    await close();
  }
}
