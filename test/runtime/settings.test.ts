// The settings API over HTTP against PostgreSQL: envelope, minimized storage, compare-and-swap,
// preset preview and refresh of the live runtime.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SettingsEnvelope } from '../../schema/settings/settings.ts';
import { SETTINGS_KEY } from '../../server/runtime/settings/store.ts';
import { readySession, startRuntimeHarness, type RuntimeHarness } from './harness.ts';

let h: RuntimeHarness;
// The settings row is one per database: start from, and leave, an empty intent.
const reset = async () => {
  await h.deps.db.setting.upsert({ where: { key: SETTINGS_KEY }, create: { key: SETTINGS_KEY, value: {} }, update: { value: {}, updatedAt: new Date() } });
  await fetch(`${h.url}/api/settings/refresh`, { method: 'POST' });
};
beforeAll(async () => {
  h = await startRuntimeHarness();
  await reset();
});
afterAll(async () => {
  if (h) await reset();
  await h?.stop();
});

const json = { 'content-type': 'application/json' };
const getSettings = async () => {
  const res = await fetch(`${h.url}/api/settings`);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return (await res.json()) as SettingsEnvelope;
};
const put = (body: unknown) => fetch(`${h.url}/api/settings`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
const storedRow = async () => (await h.deps.db.setting.findUniqueOrThrow({ where: { key: SETTINGS_KEY } }));

describe('the settings API', () => {
  // The tests below run in order against one settings row.
  it('answers the envelope with its four layers apart', async () => {
    const env = await getSettings();
    expect(Object.keys(env).sort()).toEqual(['_meta', 'bindings', 'effective', 'intent']);
    expect(env.intent).toEqual({});
    expect(env.effective.voice.shareSessions.ttlMinutes).toBe(12);
    expect(env.effective.agentStack.runtimeConfig.devTeam.swarm.allowDirectChildFallback).toBe(false);
    expect(env.bindings.preset.name).toBe('balanced');
    expect(env._meta).toEqual({ updatedAt: (await storedRow()).updatedAt.toISOString(), saveAppliedToRuntime: true, saveApplyError: null });
  });

  it('stores the minimized intent: a value equal to its preset default is stripped', async () => {
    const before = await getSettings();
    const res = await put({
      agentStack: { preset: 'scraping', model: 'model-x' },
      interaction: { sessionDefaults: { timeoutSeconds: 120, keepAlive: false } }, // the scraping preset's own values
      media: { liveView: { jpegQuality: '70' } },
      effective: { identity: { displayName: 'must not be stored' } },
      bindings: { orchestrator: 'nope' },
      _meta: { expectedUpdatedAt: before._meta.updatedAt },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const saved = (await res.json()) as SettingsEnvelope;
    const expected = { agentStack: { preset: 'scraping', model: 'model-x' }, media: { liveView: { jpegQuality: 70 } } };
    expect(saved.intent).toEqual(expected);
    expect(saved.effective.interaction.sessionDefaults.timeoutSeconds).toBe(120);
    expect(saved.effective.identity.displayName).toBe('Caravan');
    expect(saved._meta.saveAppliedToRuntime).toBe(true);
    expect(Date.parse(saved._meta.updatedAt)).toBeGreaterThan(Date.parse(before._meta.updatedAt));

    const row = await storedRow();
    expect(row.value).toEqual(expected);
    expect(row.updatedAt.toISOString()).toBe(saved._meta.updatedAt);
    expect(await getSettings()).toEqual(saved);
  });

  it('replaces the whole snapshot: omitted branches return to their defaults', async () => {
    const current = await getSettings();
    const res = await put({ memory: { enabled: true }, _meta: { expectedUpdatedAt: current._meta.updatedAt } });
    expect(res.status).toBe(200);
    const saved = (await res.json()) as SettingsEnvelope;
    expect(saved.intent).toEqual({ memory: { enabled: true } });
    expect(saved.effective.agentStack.preset).toBe('balanced');
    expect(saved.effective.media.liveView.jpegQuality).toBe(60);
  });

  it('refuses a save without version metadata with 400', async () => {
    const res = await put({ memory: { enabled: false } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/_meta\.expectedUpdatedAt/);
    expect((await put({ _meta: { expectedUpdatedAt: 'yesterday' } })).status).toBe(400);
  });

  it('answers a stale version with 409 and the current envelope', async () => {
    const current = await getSettings();
    const stale = new Date(Date.parse(current._meta.updatedAt) - 60_000).toISOString();
    const res = await put({ memory: { enabled: false }, _meta: { expectedUpdatedAt: stale } });
    expect(res.status).toBe(409);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as SettingsEnvelope & { message: string };
    expect(body.message).toMatch(/changed since/);
    expect(body.intent).toEqual(current.intent);
    expect(body.effective).toEqual(current.effective);
    expect(body._meta.updatedAt).toBe(current._meta.updatedAt);
    expect((await storedRow()).value).toEqual(current.intent);
  });

  it('lets exactly one of two concurrent saves of the same version win', async () => {
    const current = await getSettings();
    const meta = { expectedUpdatedAt: current._meta.updatedAt };
    const [a, b] = await Promise.all([
      put({ identity: { displayName: 'A' }, _meta: meta }),
      put({ identity: { displayName: 'B' }, _meta: meta }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = (await (a.status === 200 ? a : b).json()) as SettingsEnvelope;
    const loser = (await (a.status === 200 ? b : a).json()) as SettingsEnvelope;
    expect(loser._meta.updatedAt).toBe(winner._meta.updatedAt);
    expect(loser.intent).toEqual(winner.intent);
    expect((await storedRow()).value).toEqual(winner.intent);
  });

  it('previews a preset without persisting anything', async () => {
    const before = await getSettings();
    const rowBefore = await storedRow();
    const res = await fetch(`${h.url}/api/settings/preset-defaults`, { method: 'POST', headers: json, body: JSON.stringify({ preset: 'qa' }) });
    expect(res.status).toBe(200);
    const preview = (await res.json()) as SettingsEnvelope & { presetDefaults: SettingsEnvelope['effective'] };
    expect(preview.intent).toEqual({ ...before.intent, agentStack: { preset: 'qa' } });
    expect(preview.effective.media.liveView.jpegQuality).toBe(80);
    expect(preview.effective.identity.displayName).toBe(before.effective.identity.displayName);
    expect(preview.presetDefaults.voice.shareSessions.ttlMinutes).toBe(30);
    expect(preview._meta.updatedAt).toBe(before._meta.updatedAt);
    const rowAfter = await storedRow();
    expect(rowAfter.value).toEqual(rowBefore.value);
    expect(rowAfter.updatedAt).toEqual(rowBefore.updatedAt);
    expect(await getSettings()).toEqual(before);
    expect((await fetch(`${h.url}/api/settings/preset-defaults`, { method: 'POST', headers: json, body: '{"preset":"turbo"}' })).status).toBe(400);
  });

  it('refresh re-applies the saved settings to the live runtime', async () => {
    const { id: sessionId } = await readySession(h);
    const share = async () => {
      const res = await fetch(`${h.url}/api/sessions/${sessionId}/share`, { method: 'POST', headers: json, body: '{}' });
      expect(res.status).toBe(201);
      const { expiresAt } = (await res.json()) as { expiresAt: string };
      return Math.round((Date.parse(expiresAt) - Date.now()) / 60_000);
    };
    const current = await getSettings();
    const saved = await put({ voice: { shareSessions: { ttlMinutes: 5 } }, _meta: { expectedUpdatedAt: current._meta.updatedAt } });
    expect(saved.status).toBe(200);
    expect(await share()).toBe(5);

    // Another replica (or an operator with SQL) saves new settings: this process has not applied them.
    await h.deps.db.setting.update({ where: { key: SETTINGS_KEY }, data: { value: { voice: { shareSessions: { ttlMinutes: 20 } } }, updatedAt: new Date() } });
    expect(await share()).toBe(5);
    expect((await getSettings())._meta.saveAppliedToRuntime).toBe(false);

    const res = await fetch(`${h.url}/api/settings/refresh`, { method: 'POST' });
    expect(res.status).toBe(200);
    const refreshed = (await res.json()) as SettingsEnvelope;
    expect(refreshed._meta.saveAppliedToRuntime).toBe(true);
    expect(refreshed.effective.voice.shareSessions.ttlMinutes).toBe(20);
    expect(await share()).toBe(20);
    expect((await getSettings())._meta.saveAppliedToRuntime).toBe(true);
  });
});
