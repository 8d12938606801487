// The settings row: one row of "Setting" with key runtime_settings; its updated_at is the
// version. Writes are a compare-and-swap done in one SQL statement, so that of two saves based
// on the same version exactly one succeeds.
import type { SettingsIntent } from '../../../schema/settings/settings.ts';
import type { Db } from '../../db/client.ts';

export const SETTINGS_KEY = 'runtime_settings';

export interface SettingsRow {
  intent: SettingsIntent;
  /** updated_at as ISO 8601 with milliseconds (UTC). */
  updatedAt: string;
}

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();
const asIntent = (v: unknown): SettingsIntent => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as SettingsIntent) : {});

/** Reads the row, creating it (empty intent) the first time. */
export async function readSettingsRow(db: Db): Promise<SettingsRow> {
  const rows = await db.$queryRaw<Array<{ value: unknown; updated_at: Date }>>`
    WITH created AS (
      INSERT INTO "Setting" (key, value, updated_at) VALUES (${SETTINGS_KEY}, '{}'::jsonb, now())
      ON CONFLICT (key) DO NOTHING
      RETURNING value, updated_at
    )
    SELECT value, updated_at FROM created
    UNION ALL
    SELECT value, updated_at FROM "Setting" WHERE key = ${SETTINGS_KEY}`;
  // When another process inserted the row at the same moment, this statement's snapshot
  // predates that insert: read again in a fresh statement.
  const row = rows[0] ?? (await db.$queryRaw<Array<{ value: unknown; updated_at: Date }>>`
    SELECT value, updated_at FROM "Setting" WHERE key = ${SETTINGS_KEY}`)[0];
  if (!row) throw new Error('the settings row could not be read');
  return { intent: asIntent(row.value), updatedAt: iso(row.updated_at) };
}

/**
 * Writes `intent` if the row's version is still `expected`; returns the new version, or null
 * when another save came first. The new version is later than the old one even when both fall
 * in the same millisecond.
 */
export async function swapSettingsRow(db: Db, expected: string, intent: SettingsIntent, now: number): Promise<string | null> {
  const rows = await db.$queryRaw<Array<{ updated_at: Date }>>`
    UPDATE "Setting"
       SET value = ${JSON.stringify(intent)}::jsonb,
           updated_at = GREATEST(${new Date(now).toISOString()}::timestamptz, updated_at + interval '1 millisecond')
     WHERE key = ${SETTINGS_KEY} AND updated_at = ${expected}::timestamptz
    RETURNING updated_at`;
  return rows[0] ? iso(rows[0].updated_at) : null;
}
