// POST /api/settings/preset-defaults: what the settings would be with another preset selected.
// Persists nothing: a save is still required.
import { minimizeIntent, presetEffective, PresetPreviewBody, type RuntimeSettings, type SettingsEnvelope } from '../../../schema/settings/settings.ts';
import { isPlainObject } from '../../../schema/settings/fields.ts';
import { Invalid } from '../../errors.ts';
import { envelope, liveMeta, type SettingsDeps } from './envelope.ts';
import { readSettingsRow } from './store.ts';

export interface PresetPreview extends SettingsEnvelope {
  /** The selected preset's own defaults (its effective settings over an empty intent). */
  presetDefaults: RuntimeSettings;
}

export async function previewPresetDefaults(deps: SettingsDeps, body: unknown): Promise<PresetPreview> {
  const parsed = PresetPreviewBody.safeParse(body);
  if (!parsed.success) throw new Invalid(`send { preset, intent? } with preset one of balanced, scraping, agent, qa: ${parsed.error.issues[0]?.message ?? 'invalid body'}`);
  const row = await readSettingsRow(deps.db);
  const draft = parsed.data.intent ?? row.intent;
  const stack = isPlainObject(draft.agentStack) ? draft.agentStack : {};
  // Selecting a preset keeps every authored override: only the preset name changes.
  const intent = minimizeIntent({ ...draft, agentStack: { ...stack, preset: parsed.data.preset } });
  return { ...envelope(deps, intent, liveMeta(deps, row.updatedAt)), presetDefaults: presetEffective(parsed.data.preset) };
}
