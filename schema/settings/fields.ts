// Lenient field schemas for the settings model: every field takes any input and coerces it to a
// valid value (trim and cap strings, read booleans from words, floor and clamp numbers, bound
// lists), falling back to the field's default when the input cannot be read.
import { z } from 'zod';

export const MAX_TEXT = 500;
export const MAX_LIST_ITEMS = 50;
export const MAX_LIST_ITEM = 160;

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string, trimmed and capped; numbers and booleans are written out; anything else falls back. */
export function text(fallback = '', max = MAX_TEXT) {
  return z.unknown().transform((v): string => {
    if (typeof v === 'string') return v.trim().slice(0, max);
    if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
    return fallback;
  });
}

/** true/1/yes/on and false/0/no/off (any case, surrounding blanks ignored). */
export function flag(fallback: boolean) {
  return z.unknown().transform((v): boolean => {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : fallback;
    if (typeof v === 'string') {
      const w = v.trim().toLowerCase();
      if (TRUE_WORDS.has(w)) return true;
      if (FALSE_WORDS.has(w)) return false;
    }
    return fallback;
  });
}

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') return Number(v.trim());
  return Number.NaN;
}

/** A whole number: floored, clamped to [min, max]; non-finite input falls back. */
export function int(fallback: number, min: number, max: number) {
  return z.unknown().transform((v): number => {
    const n = toNumber(v);
    if (!Number.isFinite(n)) return fallback;
    return Math.min(max, Math.max(min, Math.floor(n)));
  });
}

/** A real number clamped to [min, max]; non-finite input falls back. */
export function real(fallback: number, min: number, max: number) {
  return z.unknown().transform((v): number => {
    const n = toNumber(v);
    if (!Number.isFinite(n)) return fallback;
    return Math.min(max, Math.max(min, n));
  });
}

/** One of `values` (matched trimmed and case-insensitively); anything else falls back. */
export function choice<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return z.unknown().transform((v): T[number] => {
    if (typeof v !== 'string') return fallback;
    const w = v.trim().toLowerCase();
    return values.find((x) => x.toLowerCase() === w) ?? fallback;
  });
}

/** A list of short strings: at most 50 items of 160 characters, blanks and duplicates dropped.
 *  A string is read as a newline- or comma-separated list. */
export function list(fallback: readonly string[] = [], keep: (item: string) => boolean = () => true) {
  return z.unknown().transform((v): string[] => {
    const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(/[\n,]/) : undefined;
    if (!items) return [...fallback];
    const out: string[] = [];
    for (const item of items) {
      if (typeof item !== 'string' && typeof item !== 'number') continue;
      const s = String(item).trim().slice(0, MAX_LIST_ITEM);
      if (s && keep(s) && !out.includes(s)) out.push(s);
      if (out.length === MAX_LIST_ITEMS) break;
    }
    return out;
  });
}

/** A list of objects, each normalized by `item`; at most 50. Non-object items are dropped. */
export function records<T extends z.ZodType>(item: T, max = MAX_LIST_ITEMS) {
  return z.unknown().transform((v): z.output<T>[] => {
    if (!Array.isArray(v)) return [];
    return v.filter(isPlainObject).slice(0, max).map((x) => item.parse(x) as z.output<T>);
  });
}

/** A group of fields: anything that is not an object reads as `{}`, unknown keys are dropped.
 *  Missing keys are filled with `undefined` so that zod runs each field's fallback (zod 4 skips
 *  absent keys whose schema accepts undefined). */
export function group<S extends z.ZodRawShape>(shape: S) {
  return z.preprocess((v) => {
    const o: Record<string, unknown> = isPlainObject(v) ? { ...v } : {};
    for (const k of Object.keys(shape)) if (!(k in o)) o[k] = undefined;
    return o;
  }, z.object(shape));
}
