// The settings form's rules (companion-runtime spec): the draft starts from the normalized
// settings, survives a save made elsewhere with a warning, and saving waits for the conflict
// to be resolved by discarding or by matching the new snapshot.
import { describe, expect, it } from 'vitest';
import { normalizeSettings } from '../../schema/settings/settings.ts';
import { canSave, discard, edit, isDirty, receive, saveInput, setAt, start, withPreset } from '../../web/src/settings/draft.ts';
import type { SettingsEnvelope } from '../../web/src/api/queries.ts';

const env = (intent: Record<string, unknown>, updatedAt: string): SettingsEnvelope => ({
  intent, effective: normalizeSettings(intent) as unknown as Record<string, unknown>, bindings: {},
  _meta: { updatedAt, saveAppliedToRuntime: true, saveApplyError: null },
});
const v1 = env({}, '2026-01-01T00:00:00.000Z');
const v2 = env({ persona: { tone: 'friendly' } }, '2026-01-01T00:00:01.000Z');

describe('the settings form', () => {
  it('starts from the normalized settings and submits the whole snapshot with its version', () => {
    const s = edit(start(v1), setAt(start(v1).draft, ['identity', 'displayName'], 'Staging'));
    expect(canSave(s)).toBe(true);
    const input = saveInput(s);
    expect(input.expectedUpdatedAt).toBe(v1._meta.updatedAt);
    expect(Object.keys(input.intent)).toEqual(Object.keys(normalizeSettings({})));
  });

  it('follows a new version while nothing is edited', () => {
    const s = receive(start(v1), v2);
    expect(s.incoming).toBeNull();
    expect(s.base).toBe(v2);
    expect(isDirty(s)).toBe(false);
  });

  it('keeps the draft and blocks saving when a new version arrives during an edit', () => {
    const edited = edit(start(v1), setAt(start(v1).draft, ['identity', 'displayName'], 'Staging'));
    const s = receive(edited, v2);
    expect(s.incoming).toBe(v2);
    expect((s.draft.identity as { displayName: string }).displayName).toBe('Staging');
    expect(canSave(s)).toBe(false);
    // Discarding loads the new version.
    const d = discard(s);
    expect(d.base).toBe(v2);
    expect(d.incoming).toBeNull();
    expect(canSave(d)).toBe(false);
  });

  it('resolves the conflict when the draft comes to equal the new snapshot', () => {
    const edited = edit(start(v1), setAt(start(v1).draft, ['persona', 'tone'], 'concise'));
    const s = receive(edited, v2);
    expect(s.incoming).toBe(v2);
    const matched = edit(s, setAt(s.draft, ['persona', 'tone'], 'friendly'));
    expect(matched.incoming).toBeNull();
    expect(matched.base).toBe(v2);
    expect(canSave(matched)).toBe(false);
  });

  it('selecting a preset keeps overrides and lets the rest follow the preset', () => {
    const draft = setAt(start(v1).draft, ['media', 'liveView', 'maxFps'], 9);
    const next = withPreset(draft, 'scraping') as { media: { liveView: { maxFps: number; jpegQuality: number } } };
    expect(next.media.liveView.maxFps).toBe(9);
    expect(next.media.liveView.jpegQuality).toBe(40);
  });
});
