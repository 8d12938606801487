// Builds the settings envelope from its layers; the one place that puts them side by side.
import { normalizeSettings, settingsBindings, type SettingsEnvelope, type SettingsIntent, type SettingsMeta } from '../../../schema/settings/settings.ts';
import type { Clock } from '../../deps.ts';
import type { Db } from '../../db/client.ts';
import type { LiveSettings } from './live.ts';

/** What the settings use cases need. */
export interface SettingsDeps {
  db: Db;
  clock: Clock;
  live: LiveSettings;
  /** Whether each provider sign-in lane has credentials (for bindings). */
  providerAuth?: () => Record<string, boolean>;
}

export function envelope(deps: SettingsDeps, intent: SettingsIntent, meta: SettingsMeta): SettingsEnvelope {
  const effective = normalizeSettings(intent);
  return { intent, effective, bindings: settingsBindings(effective, deps.providerAuth?.() ?? {}), _meta: meta };
}

/** `_meta` for a version as this process's live runtime sees it. */
export function liveMeta(deps: SettingsDeps, updatedAt: string): SettingsMeta {
  const { version, error } = deps.live.status();
  return { updatedAt, saveAppliedToRuntime: version === updatedAt && error === null, saveApplyError: version === updatedAt ? error : null };
}
