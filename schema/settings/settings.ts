// The settings model's layers: authored intent (the only persisted one), effective settings
// (intent over preset defaults, normalized), bindings (derived for display) and _meta (version
// and save/apply status). Normalization and minimization live here, shared by server and web.
import { z } from 'zod';
import { isPlainObject } from './fields.ts';
import { GROUP_NAMES, PRESET_NAMES, PROVIDERS, RuntimeSettings, type PresetName } from './groups.ts';
import { PRESETS } from './presets.ts';

export { RuntimeSettings, PRESET_NAMES, GROUP_NAMES, type PresetName };

/** Authored intent: a partial, possibly sparse object of groups. Only this is stored. */
export const SettingsIntent = z.record(z.string(), z.unknown());
export type SettingsIntent = z.infer<typeof SettingsIntent>;

export const SettingsMeta = z.object({
  /** The version: `updated_at` of the settings row, ISO 8601. */
  updatedAt: z.string(),
  /** Whether this process's live runtime runs on this version. */
  saveAppliedToRuntime: z.boolean(),
  /** Why applying to the live runtime failed; null when it did not. */
  saveApplyError: z.string().nullable(),
});
export type SettingsMeta = z.infer<typeof SettingsMeta>;

export const ProviderBinding = z.object({ provider: z.enum(PROVIDERS), model: z.string() });

export const SettingsBindings = z.object({
  preset: z.object({ name: z.enum(PRESET_NAMES), label: z.string() }),
  orchestrator: ProviderBinding,
  voiceGeneration: ProviderBinding,
  voiceRuntimeFamily: z.string(),
  /** Whether each sign-in lane has credentials available (env refresh token or token file). */
  providerAuth: z.record(z.string(), z.boolean()),
  /** The default working directory code workers get (explicit, else the first allowed root). */
  devWorkingDirectory: z.string(),
});
export type SettingsBindings = z.infer<typeof SettingsBindings>;

export const SettingsEnvelope = z.object({
  intent: SettingsIntent,
  effective: RuntimeSettings,
  bindings: SettingsBindings,
  _meta: SettingsMeta,
});
export type SettingsEnvelope = z.infer<typeof SettingsEnvelope>;

/** Body of PUT /api/settings: the full authored snapshot plus the version it was based on. */
export const SettingsSaveMeta = z.object({ expectedUpdatedAt: z.string().min(1) });

/** Body of POST /api/settings/preset-defaults. */
export const PresetPreviewBody = z.object({
  preset: z.enum(PRESET_NAMES),
  /** The draft to preview on; the saved intent when absent. */
  intent: SettingsIntent.optional(),
});

const DEFAULT_MODEL: Record<(typeof PROVIDERS)[number], string> = {
  'provider-a-oauth': 'provider-a-default',
  'provider-b-oauth': 'provider-b-default',
  'api-key': 'provider-a-default',
  none: '',
};

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v ?? null)) as T;

/** Objects merge key by key; anywhere else the authored value wins over the seeded one. */
function seed(base: unknown, authored: unknown): unknown {
  if (authored === undefined) return clone(base);
  if (isPlainObject(base) && isPlainObject(authored)) {
    const out: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(base), ...Object.keys(authored)])) out[k] = seed(base[k], authored[k]);
    return out;
  }
  return authored;
}

/** The preset an intent selects (unknown or missing names select `balanced`). */
export function presetOf(intent: unknown): PresetName {
  const stack = isPlainObject(intent) ? intent.agentStack : undefined;
  return RuntimeSettings.parse({ agentStack: { preset: isPlainObject(stack) ? stack.preset : undefined } }).agentStack.preset;
}

/** Effective settings: preset defaults seed what the intent leaves unset, then every field is
 *  coerced and clamped, then cross-field fallbacks apply. */
export function normalizeSettings(intent: unknown): RuntimeSettings {
  const authored = isPlainObject(intent) ? intent : {};
  const s = RuntimeSettings.parse(seed(PRESETS[presetOf(authored)].defaults, authored));
  const devTeam = s.agentStack.runtimeConfig.devTeam;
  if (!devTeam.defaultWorkingDirectory) devTeam.defaultWorkingDirectory = s.permissions.devTasks.allowedWorkspaceRoots[0] ?? '';
  return s;
}

/** The defaults a preset produces on its own (what a preview shows for an empty intent). */
export function presetEffective(name: PresetName): RuntimeSettings {
  return normalizeSettings({ agentStack: { preset: name } });
}

/** Only the settings groups of a body: drops `_meta`, `effective`, `bindings` and unknown keys. */
export function authoredPart(body: unknown): SettingsIntent {
  if (!isPlainObject(body)) return {};
  const names = new Set<string>(GROUP_NAMES);
  return Object.fromEntries(Object.entries(clone(body)).filter(([k]) => names.has(k)));
}

/**
 * The smallest intent with the same effective settings: every authored field whose removal
 * leaves the normalized JSON unchanged is deleted (so preset defaults are not frozen into
 * overrides, and fields equal to their defaults go away); kept leaves are stored in their
 * normalized form (`"600"` becomes `600`) when that changes nothing either.
 */
export function minimizeIntent(intent: unknown): SettingsIntent {
  const root = authoredPart(intent);
  const effective = normalizeSettings(root);
  const target = JSON.stringify(effective);
  const same = () => JSON.stringify(normalizeSettings(root)) === target;

  function walk(obj: Record<string, unknown>, eff: unknown): void {
    for (const k of Object.keys(obj)) {
      const v = obj[k];
      delete obj[k];
      if (same()) continue;
      obj[k] = v;
      const effV = isPlainObject(eff) ? eff[k] : undefined;
      if (isPlainObject(v) && isPlainObject(effV)) {
        walk(v, effV);
        if (Object.keys(v).length === 0) {
          delete obj[k];
          if (!same()) obj[k] = v;
        }
        continue;
      }
      if (effV !== undefined && JSON.stringify(effV) !== JSON.stringify(v)) {
        obj[k] = clone(effV);
        if (!same()) obj[k] = v;
      }
    }
  }
  walk(root, effective);
  return root;
}

export function settingsBindings(effective: RuntimeSettings, providerAuth: Record<string, boolean> = {}): SettingsBindings {
  const stack = effective.agentStack;
  const orchestrator = { provider: stack.provider, model: stack.model || DEFAULT_MODEL[stack.provider] };
  const voiceProvider = effective.voice.transcription.provider;
  return {
    preset: { name: stack.preset, label: PRESETS[stack.preset].label },
    orchestrator,
    voiceGeneration: voiceProvider === 'none' ? orchestrator : { provider: voiceProvider, model: DEFAULT_MODEL[voiceProvider] },
    voiceRuntimeFamily: effective.voice.enabled ? stack.runtimeFamilies.voice : 'none',
    providerAuth: { 'provider-a-oauth': providerAuth['provider-a-oauth'] ?? false, 'provider-b-oauth': providerAuth['provider-b-oauth'] ?? false },
    devWorkingDirectory: stack.runtimeConfig.devTeam.defaultWorkingDirectory,
  };
}
