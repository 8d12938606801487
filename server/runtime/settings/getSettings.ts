// GET /api/settings: the saved intent with its effective settings, bindings and version.
import type { SettingsEnvelope } from '../../../schema/settings/settings.ts';
import { envelope, liveMeta, type SettingsDeps } from './envelope.ts';
import { readSettingsRow } from './store.ts';

export async function getSettings(deps: SettingsDeps): Promise<SettingsEnvelope> {
  const row = await readSettingsRow(deps.db);
  return envelope(deps, row.intent, liveMeta(deps, row.updatedAt));
}
