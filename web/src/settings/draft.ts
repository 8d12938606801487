// The settings form's state, as pure functions (companion-runtime spec, dashboard form rules):
// - the draft starts from the normalized (effective) settings, so settings the form does not
//   show are kept, and it is submitted whole (the full materialized snapshot);
// - when the saved snapshot changes while the draft holds edits, the draft is kept, a warning
//   shows, and saving stays disabled until the draft is discarded or equals the new snapshot.
import { minimizeIntent, normalizeSettings } from '../../../schema/settings/settings.ts';
import type { SettingsEnvelope } from '../api/queries.ts';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Snapshot = Record<string, Json>;

export interface FormState {
  /** The saved envelope the draft is based on (its version is what a save expects). */
  base: SettingsEnvelope;
  draft: Snapshot;
  /** A newer saved envelope that arrived while the draft had edits. */
  incoming: SettingsEnvelope | null;
}

const json = (v: unknown): string => JSON.stringify(v);
export const normalized = (s: unknown): Snapshot => normalizeSettings(s) as unknown as Snapshot;
export const sameSettings = (a: unknown, b: unknown): boolean => json(normalized(a)) === json(normalized(b));

export function start(env: SettingsEnvelope): FormState {
  return { base: env, draft: normalized(env.effective), incoming: null };
}

export const isDirty = (s: FormState): boolean => !sameSettings(s.draft, s.base.effective);
export const canSave = (s: FormState): boolean => s.incoming === null && isDirty(s);

/** A saved envelope arrived (subscription, a reload, or a save that lost the race). */
export function receive(s: FormState, env: SettingsEnvelope): FormState {
  if (env._meta.updatedAt === s.base._meta.updatedAt) return s;
  if (s.incoming && env._meta.updatedAt === s.incoming._meta.updatedAt) return s;
  // Nothing edited: follow the saved settings.
  if (!isDirty(s)) return start(env);
  // A new version with the same settings (a save of identical values): only the version moves.
  if (sameSettings(env.effective, s.base.effective)) return { base: env, draft: s.draft, incoming: s.incoming };
  // The draft already says what was saved: nothing to resolve.
  if (sameSettings(s.draft, env.effective)) return { base: env, draft: s.draft, incoming: null };
  return { ...s, incoming: env };
}

/** An edit of the draft; an edit that makes it equal the incoming snapshot resolves the conflict. */
export function edit(s: FormState, draft: Snapshot): FormState {
  if (s.incoming && sameSettings(draft, s.incoming.effective)) return { base: s.incoming, draft, incoming: null };
  return { ...s, draft };
}

/** Drops the edits: the newest saved settings. */
export function discard(s: FormState): FormState {
  return start(s.incoming ?? s.base);
}

/** What a save sends: the whole draft, and the version it was based on. */
export function saveInput(s: FormState): { intent: Snapshot; expectedUpdatedAt: string } {
  return { intent: s.draft, expectedUpdatedAt: s.base._meta.updatedAt };
}

/** Paths (a.b.c) whose values differ between two snapshots, for the conflict warning. */
export function differences(a: unknown, b: unknown, prefix = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => differences(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return json(a) === json(b) ? [] : [prefix];
}

/**
 * Selecting another preset keeps every authored override and lets the rest follow the new
 * preset (as POST /api/settings/preset-defaults previews it): the draft is reduced to what
 * differs from the old preset, the preset name is changed, and the result normalized again.
 */
export function withPreset(draft: Snapshot, preset: string): Snapshot {
  const intent = minimizeIntent(draft) as Record<string, unknown>;
  const stack = (typeof intent.agentStack === 'object' && intent.agentStack !== null ? intent.agentStack : {}) as Record<string, unknown>;
  return normalized({ ...intent, agentStack: { ...stack, preset } });
}

export function getAt(obj: unknown, path: string[]): unknown {
  return path.reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined), obj);
}

export function setAt(obj: Snapshot, path: string[], value: Json): Snapshot {
  const [head, ...rest] = path;
  if (head === undefined) return obj;
  const child = obj[head];
  const next = rest.length === 0 ? value : setAt((typeof child === 'object' && child !== null && !Array.isArray(child) ? child : {}) as Snapshot, rest, value);
  return { ...obj, [head]: next };
}
