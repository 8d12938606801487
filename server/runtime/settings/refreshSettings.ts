// POST /api/settings/refresh: re-applies the last saved settings to the live runtime (for
// instance after another replica saved them). Never applies unsaved drafts.
import { normalizeSettings, type SettingsEnvelope } from '../../../schema/settings/settings.ts';
import { envelope, type SettingsDeps } from './envelope.ts';
import { readSettingsRow } from './store.ts';

export async function refreshSettings(deps: SettingsDeps): Promise<SettingsEnvelope> {
  const row = await readSettingsRow(deps.db);
  const applied = await deps.live.apply(normalizeSettings(row.intent), row.updatedAt);
  return envelope(deps, row.intent, { updatedAt: row.updatedAt, saveAppliedToRuntime: applied.applied, saveApplyError: applied.error });
}
