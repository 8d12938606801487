// PUT /api/settings: replaces the whole authored snapshot (not a merge) if the caller's version
// is still current, then applies the new effective settings to the live runtime. Persisting and
// applying are separate outcomes, both reported in `_meta`.
import { isPlainObject } from '../../../schema/settings/fields.ts';
import { minimizeIntent, normalizeSettings, SettingsSaveMeta, type SettingsEnvelope } from '../../../schema/settings/settings.ts';
import { Invalid, ServiceError } from '../../errors.ts';
import { envelope, liveMeta, type SettingsDeps } from './envelope.ts';
import { readSettingsRow, swapSettingsRow } from './store.ts';

/** 409 carrying the current envelope, so that the client can show what changed. */
export class StaleSettings extends ServiceError {
  constructor(readonly current: SettingsEnvelope, expected: string) {
    super(409, `the settings changed since version ${expected.slice(0, 40)} (now ${current._meta.updatedAt}): this reply carries the current settings; merge your edits into them and save again`);
  }
}

export async function saveSettings(deps: SettingsDeps, body: unknown): Promise<SettingsEnvelope> {
  if (!isPlainObject(body)) throw new Invalid('send the settings as a JSON object: the full authored snapshot plus _meta.expectedUpdatedAt');
  const meta = SettingsSaveMeta.safeParse(body._meta);
  if (!meta.success) throw new Invalid('_meta.expectedUpdatedAt is required: the updatedAt of the settings you loaded (GET /api/settings)');
  const expected = Date.parse(meta.data.expectedUpdatedAt);
  if (Number.isNaN(expected)) throw new Invalid(`_meta.expectedUpdatedAt must be an ISO 8601 timestamp, got ${JSON.stringify(meta.data.expectedUpdatedAt).slice(0, 80)}`);
  // A client may send the envelope back: its `intent` is the snapshot. Otherwise the body's
  // groups are; `effective`, `bindings` and `_meta` never reach storage.
  const authored = isPlainObject(body.intent) ? body.intent : body;
  const intent = minimizeIntent(authored);
  const version = await swapSettingsRow(deps.db, new Date(expected).toISOString(), intent, deps.clock.now());
  if (!version) {
    const row = await readSettingsRow(deps.db);
    throw new StaleSettings(envelope(deps, row.intent, liveMeta(deps, row.updatedAt)), meta.data.expectedUpdatedAt);
  }
  const applied = await deps.live.apply(normalizeSettings(intent), version);
  return envelope(deps, intent, { updatedAt: version, saveAppliedToRuntime: applied.applied, saveApplyError: applied.error });
}
