// Form controls generated from the settings snapshot itself: a toggle for a boolean, a number
// field for a number, a select where the field is a choice, a text box for a string, one line
// per item for a list of strings, and a JSON editor for a list of records (automation jobs).
// Nested groups become nested fieldsets, so every field of the model is editable.
import { useEffect, useId, useState } from 'react';
import { PRESET_NAMES, PROVIDERS } from '../../../schema/settings/groups.ts';
import type { Json } from './draft.ts';

/** The choices of the fields that are enumerations (schema/settings/groups.ts `choice(...)`). */
const CHOICES: Record<string, readonly string[]> = {
  'persona.tone': ['neutral', 'concise', 'friendly'],
  'interaction.sessionDefaults.region': ['us-west-2', 'us-east-1', 'eu-central-1', 'ap-southeast-1'],
  'agentStack.preset': PRESET_NAMES,
  'agentStack.provider': PROVIDERS,
  'agentStack.runtimeFamilies.voice': ['realtime', 'pipeline', 'none'],
  'memoryLlm.provider': PROVIDERS,
  'voice.transcription.provider': PROVIDERS,
};
/** Lists of records rather than of strings. */
const RECORD_LISTS = new Set(['automations.jobs']);
const LONG_TEXT = /prompt|description|signature|instructions/i;

const ACRONYMS: Record<string, string> = { fps: 'FPS', jpeg: 'JPEG', api: 'API', llm: 'LLM', ttl: 'TTL', url: 'URL' };

/** `maxFps` -> "Max FPS". */
export function label(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(' ').map((w) => ACRONYMS[w] ?? w);
  const first = words[0] ?? '';
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ');
}

export function SettingsFields({ path, value, onChange }: { path: string[]; value: Json | undefined; onChange: (path: string[], value: Json) => void }) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const entries = Object.entries(value);
  const leaves = entries.filter(([, v]) => typeof v !== 'object' || v === null || Array.isArray(v));
  const groups = entries.filter(([, v]) => typeof v === 'object' && v !== null && !Array.isArray(v));
  return (
    <>
      {leaves.length > 0 && (
        <div className="field-grid">
          {leaves.map(([k, v]) => <Field key={k} path={[...path, k]} value={v} onChange={onChange} />)}
        </div>
      )}
      {groups.map(([k, v]) => (
        <fieldset key={k} className="subgroup">
          <legend>{label(k)}</legend>
          <SettingsFields path={[...path, k]} value={v} onChange={onChange} />
        </fieldset>
      ))}
    </>
  );
}

function Field({ path, value, onChange }: { path: string[]; value: Json; onChange: (path: string[], value: Json) => void }) {
  const id = useId();
  const key = path[path.length - 1]!;
  const dotted = path.join('.');
  const set = (v: Json) => onChange(path, v);

  if (typeof value === 'boolean') {
    return (
      <label className="toggle" htmlFor={id}>
        <input id={id} type="checkbox" checked={value} onChange={(e) => set(e.target.checked)} data-path={dotted} />
        <span className="toggle-track" aria-hidden="true" />
        <span>{label(key)}</span>
      </label>
    );
  }
  if (typeof value === 'number') return <NumberField id={id} name={label(key)} path={dotted} value={value} set={set} />;
  if (Array.isArray(value) && (RECORD_LISTS.has(dotted) || value.some((v) => typeof v === 'object' && v !== null))) {
    return <JsonList id={id} path={path} value={value} onChange={onChange} />;
  }
  if (Array.isArray(value)) {
    return (
      <label className="field wide" htmlFor={id}>
        <span>{label(key)} <em className="muted">(one per line)</em></span>
        <textarea id={id} rows={Math.max(2, value.length + 1)} value={value.join('\n')} onChange={(e) => set(e.target.value.split('\n'))} data-path={dotted} />
      </label>
    );
  }
  const text = value === null ? '' : String(value);
  const choices = CHOICES[dotted];
  if (choices) {
    return (
      <label className="field" htmlFor={id}>
        <span>{label(key)}</span>
        <select id={id} value={text} onChange={(e) => set(e.target.value)} data-path={dotted}>
          {choices.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </label>
    );
  }
  if (LONG_TEXT.test(key)) {
    return (
      <label className="field wide" htmlFor={id}>
        <span>{label(key)}</span>
        <textarea id={id} rows={3} value={text} onChange={(e) => set(e.target.value)} data-path={dotted} />
      </label>
    );
  }
  return (
    <label className="field" htmlFor={id}>
      <span>{label(key)}</span>
      <input id={id} type="text" value={text} onChange={(e) => set(e.target.value)} data-path={dotted} />
    </label>
  );
}

/** A number box that may be empty while typing; the draft takes each value that parses. */
function NumberField({ id, name, path, value, set }: { id: string; name: string; path: string; value: number; set: (v: Json) => void }) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText((t) => (Number(t) === value && t.trim() !== '' ? t : String(value))), [value]);
  return (
    <label className="field" htmlFor={id}>
      <span>{name}</span>
      <input
        id={id}
        type="number"
        step="any"
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() !== '' && Number.isFinite(Number(e.target.value))) set(Number(e.target.value));
        }}
        data-path={path}
      />
    </label>
  );
}

/** A list of records as JSON; the draft changes only while the text parses to an array. */
function JsonList({ id, path, value, onChange }: { id: string; path: string[]; value: Json[]; onChange: (path: string[], value: Json) => void }) {
  const serialized = JSON.stringify(value, null, 2);
  const [text, setText] = useState(serialized);
  const [error, setError] = useState('');
  useEffect(() => {
    // Follow the draft when it changes from elsewhere (discard, a newer version).
    setText((t) => (safeParse(t) !== undefined && JSON.stringify(safeParse(t)) === JSON.stringify(value) ? t : serialized));
  }, [serialized, value]);
  return (
    <label className="field wide" htmlFor={id}>
      <span>{label(path[path.length - 1]!)} <em className="muted">(JSON list)</em></span>
      <textarea
        id={id}
        className="mono"
        rows={Math.min(12, Math.max(3, text.split('\n').length))}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const parsed = safeParse(e.target.value);
          if (!Array.isArray(parsed)) return setError('Not a JSON list yet: fix it to change the draft.');
          setError('');
          onChange(path, parsed as Json[]);
        }}
        data-path={path.join('.')}
      />
      {error && <small className="text-bad">{error}</small>}
    </label>
  );
}

function safeParse(t: string): unknown {
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}
