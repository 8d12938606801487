// Settings normalization (coercion, clamping, fallbacks per group), presets and minimization.
import { describe, expect, it } from 'vitest';
import { GROUP_NAMES } from '../../schema/settings/groups.ts';
import { PRESETS } from '../../schema/settings/presets.ts';
import { authoredPart, minimizeIntent, normalizeSettings, presetOf, settingsBindings } from '../../schema/settings/settings.ts';

/** Reads a dotted path of the normalized settings. */
const at = (o: unknown, p: string): unknown => p.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);
/** Builds an authored intent holding `value` at a dotted path. */
const put = (p: string, value: unknown): Record<string, unknown> =>
  p.split('.').reduceRight<unknown>((v, k) => ({ [k]: v }), value) as Record<string, unknown>;

const long = 'x'.repeat(600);

// [path, authored value, normalized value]; the first row of each group is its default.
const table: Record<string, Array<[string, unknown, unknown]>> = {
  identity: [
    ['identity.displayName', undefined, 'Caravan'],
    ['identity.displayName', '  Lab fleet  ', 'Lab fleet'],
    ['identity.displayName', long, 'x'.repeat(63)],
    ['identity.description', long, 'x'.repeat(500)],
    ['identity.description', 42, '42'],
    ['identity.description', { no: 1 }, ''],
  ],
  persona: [
    ['persona.tone', undefined, 'neutral'],
    ['persona.tone', ' Concise ', 'concise'],
    ['persona.tone', 'shouty', 'neutral'],
    ['persona.signature', ' — the ops team ', '— the ops team'],
  ],
  prompting: [
    ['prompting.systemPrompt', undefined, ''],
    ['prompting.systemPrompt', 'p'.repeat(5000), 'p'.repeat(4000)],
    ['prompting.extraInstructions', ['  be brief ', '', 'be brief', 7, null, 'y'.repeat(200)], ['be brief', '7', 'y'.repeat(160)]],
    ['prompting.extraInstructions', 'one, two\nthree', ['one', 'two', 'three']],
    ['prompting.extraInstructions', Array.from({ length: 80 }, (_, i) => `rule ${i}`), Array.from({ length: 50 }, (_, i) => `rule ${i}`)],
  ],
  permissions: [
    ['permissions.devTasks.allowedWorkspaceRoots', undefined, []],
    ['permissions.devTasks.allowedWorkspaceRoots', ['/srv/code', 'relative/dir', ' /home/op ', '/srv/code'], ['/srv/code', '/home/op']],
    ['permissions.liveView.allowSharing', undefined, true],
    ['permissions.liveView.allowSharing', 'off', false],
    ['permissions.liveView.allowSharing', 'NO', false],
    ['permissions.liveView.allowSharing', 'maybe', true],
    ['permissions.ingest.acceptPublicApiToken', 0, false],
  ],
  interaction: [
    ['interaction.sessionDefaults.timeoutSeconds', undefined, 300],
    ['interaction.sessionDefaults.timeoutSeconds', '900.9', 900],
    ['interaction.sessionDefaults.timeoutSeconds', 5, 60],
    ['interaction.sessionDefaults.timeoutSeconds', 1e9, 21600],
    ['interaction.sessionDefaults.timeoutSeconds', 'soon', 300],
    ['interaction.sessionDefaults.timeoutSeconds', Number.POSITIVE_INFINITY, 300],
    ['interaction.sessionDefaults.keepAlive', 'yes', true],
    ['interaction.sessionDefaults.keepAlive', ' ON ', true],
    ['interaction.sessionDefaults.region', 'EU-CENTRAL-1', 'eu-central-1'],
    ['interaction.replyBudget.maxOutputTokens', -3, 1],
  ],
  agentStack: [
    ['agentStack.preset', undefined, 'balanced'],
    ['agentStack.preset', 'QA', 'qa'],
    ['agentStack.preset', 'turbo', 'balanced'],
    ['agentStack.provider', 'provider-b-oauth', 'provider-b-oauth'],
    ['agentStack.provider', 'someone-else', 'provider-a-oauth'],
    ['agentStack.model', '  model-x ', 'model-x'],
    ['agentStack.runtimeConfig.devTeam.swarm.allowDirectChildFallback', undefined, false],
    ['agentStack.runtimeConfig.devTeam.swarm.allowDirectChildFallback', '1', true],
    ['agentStack.runtimeConfig.devTeam.swarm.maxWorkers', 99, 16],
    ['agentStack.runtimeConfig.gameRuntime.server', undefined, ''],
    ['agentStack.runtimeConfig.gameRuntime.server', ' eu-1.example.net:25565 ', 'eu-1.example.net:25565'],
    ['agentStack.runtimeConfig.browser.viewportWidth', '1920', 1920],
  ],
  memory: [
    ['memory.enabled', undefined, false],
    ['memory.retentionDays', 0, 1],
    ['memory.maxItems', '250', 250],
  ],
  memoryLlm: [
    ['memoryLlm.provider', undefined, 'none'],
    ['memoryLlm.temperature', '0.75', 0.75],
    ['memoryLlm.temperature', 9, 2],
    ['memoryLlm.temperature', Number.NaN, 0.2],
  ],
  initiative: [
    ['initiative.textIntervalMinutes', undefined, 60],
    ['initiative.textIntervalMinutes', 1, 5],
    ['initiative.voiceIntervalMinutes', '30', 30],
  ],
  voice: [
    ['voice.shareSessions.ttlMinutes', undefined, 12],
    ['voice.shareSessions.ttlMinutes', 1, 2],
    ['voice.shareSessions.ttlMinutes', 45, 30],
    ['voice.shareSessions.maxActive', 1000, 240],
    ['voice.transcription.language', ' de ', 'de'],
    ['voice.soundboard.enabled', 'true', true],
  ],
  media: [
    ['media.liveView.jpegQuality', undefined, 60],
    ['media.liveView.jpegQuality', 101, 100],
    ['media.liveView.jpegQuality', '5', 10],
    ['media.liveView.maxFps', 60, 15],
    ['media.liveView.maxWidth', 640.5, 640],
  ],
  music: [
    ['music.duckingPercent', undefined, 40],
    ['music.duckingPercent', 150, 100],
    ['music.enabled', 'on', true],
  ],
  automations: [
    ['automations.jobs', undefined, []],
    ['automations.jobs', 'not a list', []],
    [
      'automations.jobs',
      [{ name: ' nightly ', schedule: '0 3 * * *', action: 'purge-ended-records', extra: 1 }, 'junk'],
      [{ name: 'nightly', schedule: '0 3 * * *', action: 'purge-ended-records', target: '', enabled: true }],
    ],
    ['automations.jobs', Array.from({ length: 60 }, () => ({ name: 'j' })), Array.from({ length: 50 }, () => ({ name: 'j', schedule: '', action: 'webhook', target: '', enabled: true }))],
  ],
};

describe('settings normalization', () => {
  it('covers every group', () => {
    expect(Object.keys(table).sort()).toEqual([...GROUP_NAMES].sort());
    expect(Object.keys(normalizeSettings({}))).toEqual(GROUP_NAMES);
  });

  for (const [group, rows] of Object.entries(table)) {
    it.each(rows)(`${group}: %s = %j reads as %j`, (path, value, expected) => {
      expect(at(normalizeSettings(value === undefined ? {} : put(path, value)), path)).toEqual(expected);
    });
  }

  it('reads a group that is not an object, and junk input, as all defaults', () => {
    const defaults = normalizeSettings({});
    expect(normalizeSettings({ media: 'loud', voice: [1, 2] })).toEqual(defaults);
    expect(normalizeSettings(null)).toEqual(defaults);
    expect(normalizeSettings('x')).toEqual(defaults);
  });

  it('gives code workers the first allowed root when their directory is unset', () => {
    const s = normalizeSettings({ permissions: { devTasks: { allowedWorkspaceRoots: ['/srv/a', '/srv/b'] } } });
    expect(s.agentStack.runtimeConfig.devTeam.defaultWorkingDirectory).toBe('/srv/a');
    const explicit = normalizeSettings({ permissions: { devTasks: { allowedWorkspaceRoots: ['/srv/a'] } }, agentStack: { runtimeConfig: { devTeam: { defaultWorkingDirectory: '/srv/z' } } } });
    expect(explicit.agentStack.runtimeConfig.devTeam.defaultWorkingDirectory).toBe('/srv/z');
  });
});

describe('presets', () => {
  it('seed the values the intent leaves unset', () => {
    const s = normalizeSettings({ agentStack: { preset: 'scraping' } });
    expect(s.interaction.sessionDefaults.timeoutSeconds).toBe(120);
    expect(s.agentStack.runtimeConfig.browser.blockAds).toBe(true);
    expect(s.media.liveView.jpegQuality).toBe(40);
  });

  it('never overrule an authored value, and removing the override returns to the preset', () => {
    const authored = { agentStack: { preset: 'scraping' }, interaction: { sessionDefaults: { timeoutSeconds: 600 } } };
    expect(normalizeSettings(authored).interaction.sessionDefaults.timeoutSeconds).toBe(600);
    expect(normalizeSettings({ agentStack: { preset: 'scraping' } }).interaction.sessionDefaults.timeoutSeconds).toBe(120);
  });

  it('each produce valid settings', () => {
    for (const name of Object.keys(PRESETS)) {
      expect(presetOf({ agentStack: { preset: name } })).toBe(name);
      expect(normalizeSettings({ agentStack: { preset: name } }).agentStack.preset).toBe(name);
    }
  });
});

describe('minimization before storage', () => {
  it('strips values equal to the preset default or the built-in default, keeps real overrides', () => {
    const intent = minimizeIntent({
      agentStack: { preset: 'scraping', model: ' m ' },
      interaction: { sessionDefaults: { timeoutSeconds: 120, keepAlive: 'no' } },
      media: { liveView: { jpegQuality: '75', maxFps: 5 } },
      music: { duckingPercent: 40 },
    });
    expect(intent).toEqual({ agentStack: { preset: 'scraping', model: 'm' }, media: { liveView: { jpegQuality: 75, maxFps: 5 } } });
  });

  it('keeps the normalized result unchanged', () => {
    const authored = { agentStack: { preset: 'qa' }, voice: { shareSessions: { ttlMinutes: 30, maxActive: '9' } }, persona: { tone: 'loud' }, junk: { a: 1 } };
    expect(normalizeSettings(minimizeIntent(authored))).toEqual(normalizeSettings(authored));
  });

  it('drops the envelope layers and unknown keys, and leaves unset fields absent', () => {
    expect(minimizeIntent({ effective: normalizeSettings({}), bindings: {}, _meta: { expectedUpdatedAt: 'x' }, nope: 1 })).toEqual({});
    expect(authoredPart({ memory: { enabled: true }, _meta: {} })).toEqual({ memory: { enabled: true } });
  });

  it('does not freeze a derived fallback into an override', () => {
    const intent = minimizeIntent({
      permissions: { devTasks: { allowedWorkspaceRoots: ['/srv/a'] } },
      agentStack: { runtimeConfig: { devTeam: { defaultWorkingDirectory: '/srv/a' } } },
    });
    expect(intent).toEqual({ permissions: { devTasks: { allowedWorkspaceRoots: ['/srv/a'] } } });
  });
});

describe('bindings', () => {
  it('are derived from the effective settings', () => {
    const b = settingsBindings(normalizeSettings({ agentStack: { preset: 'agent', provider: 'provider-b-oauth' }, voice: { enabled: true } }), { 'provider-b-oauth': true });
    expect(b.preset.name).toBe('agent');
    expect(b.orchestrator).toEqual({ provider: 'provider-b-oauth', model: 'provider-b-default' });
    expect(b.voiceGeneration).toEqual(b.orchestrator);
    expect(b.voiceRuntimeFamily).toBe('none');
    expect(b.providerAuth).toEqual({ 'provider-a-oauth': false, 'provider-b-oauth': true });
  });
});
