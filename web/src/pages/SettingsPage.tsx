// Settings: the operator-runtime settings form (companion-runtime spec). It edits the full
// normalized snapshot and saves it whole against the version it started from; the rules for a
// save made elsewhere meanwhile live in settings/draft.ts. The Public HTTPS card sits on top.
import { useEffect, useReducer, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { GROUP_NAMES } from '../../../schema/settings/settings.ts';
import { describeError } from '../api/client.ts';
import { SaveSettingsMutation, SettingsQuery, SettingsSubscription, type SettingsEnvelope } from '../api/queries.ts';
import { PublicHttpsCard } from '../components/PublicHttpsCard.tsx';
import { ErrorBox, Loading, PageHeader } from '../components/ui.tsx';
import { canSave, differences, discard, edit, isDirty, receive, saveInput, setAt, start, withPreset, type FormState, type Snapshot } from '../settings/draft.ts';
import { SettingsFields } from '../settings/fields.tsx';

type Action =
  | { type: 'receive'; env: SettingsEnvelope }
  | { type: 'edit'; draft: Snapshot }
  | { type: 'discard' }
  | { type: 'saved'; env: SettingsEnvelope };

function reducer(s: FormState | null, a: Action): FormState | null {
  if (a.type === 'receive') return s ? receive(s, a.env) : start(a.env);
  if (!s) return s;
  if (a.type === 'edit') return edit(s, a.draft);
  if (a.type === 'discard') return discard(s);
  return start(a.env);
}

const GROUP_LABELS: Record<string, string> = {
  identity: 'Identity', persona: 'Persona', prompting: 'Prompting', permissions: 'Permissions', interaction: 'Interaction',
  agentStack: 'Agent stack', memory: 'Memory', memoryLlm: 'Memory model', initiative: 'Initiative', voice: 'Voice',
  media: 'Media', music: 'Music', automations: 'Automations',
};

export function SettingsPage() {
  const [res, refetch] = useQuery({ query: SettingsQuery });
  const [state, dispatch] = useReducer(reducer, null);
  const [saveState, save] = useMutation(SaveSettingsMutation);
  const [message, setMessage] = useState<{ tone: 'ok' | 'bad' | 'warn'; text: string } | null>(null);

  useEffect(() => {
    if (res.data) dispatch({ type: 'receive', env: res.data.settings });
  }, [res.data]);
  useSubscription({ query: SettingsSubscription }, (_p, data) => {
    dispatch({ type: 'receive', env: data.settingsChanged });
    return data;
  });
  // Public HTTPS has no stream of its own: read again every 10 s.
  useEffect(() => {
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 10_000);
    return () => clearInterval(t);
  }, [refetch]);

  if (res.error && !res.data) return <ErrorBox title="Settings could not be loaded" message={describeError(res.error)} onRetry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!state || !res.data) return <Loading what="settings" />;

  const dirty = isDirty(state);
  const conflict = state.incoming;
  const onSave = async () => {
    setMessage(null);
    const r = await save(saveInput(state));
    if (r.error || !r.data) return setMessage({ tone: 'bad', text: `Not saved: ${describeError(r.error)}` });
    const out = r.data.saveSettings;
    if (!out.saved) {
      dispatch({ type: 'receive', env: out.settings });
      return;
    }
    dispatch({ type: 'saved', env: out.settings });
    const meta = out.settings._meta;
    setMessage(meta.saveAppliedToRuntime
      ? { tone: 'ok', text: `Saved and applied at ${new Date(meta.updatedAt).toLocaleTimeString()}.` }
      : { tone: 'warn', text: `Saved, but not fully applied to the running service: ${meta.saveApplyError ?? 'unknown reason'}. Use Refresh on the API or restart to retry.` });
  };

  const draft = state.draft;
  const changed = conflict ? differences(draft, conflict.effective) : [];
  const preset = String((draft.agentStack as Record<string, unknown> | undefined)?.preset ?? 'balanced');

  return (
    <>
      <PageHeader title="Settings" subtitle={<>Runtime settings of this installation · version <span className="mono">{state.base._meta.updatedAt}</span></>} />
      <div className="metrics one">
        <PublicHttpsCard state={res.data.publicHttps} />
      </div>

      {conflict && (
        <div className="conflict" role="alert" data-testid="settings-conflict">
          <strong>Someone else saved the settings while you were editing.</strong>
          <p>
            Your edits are kept here, but saving is disabled so that they do not overwrite the newer version
            (saved {new Date(conflict._meta.updatedAt).toLocaleTimeString()}). Discard your edits to load it, or change
            your draft to match it.
          </p>
          {changed.length > 0 && (
            <p className="small">Differs in: {changed.slice(0, 8).map((p) => <code key={p} className="chip">{p}</code>)}{changed.length > 8 ? ` and ${changed.length - 8} more` : ''}</p>
          )}
          <button type="button" className="btn" onClick={() => { setMessage(null); dispatch({ type: 'discard' }); }} data-testid="discard-conflict">Discard my edits and load the new version</button>
        </div>
      )}

      <div className="settings-layout">
        <nav className="settings-nav" aria-label="Settings groups">
          {GROUP_NAMES.map((g) => <a key={g} href={`#group-${g}`}>{GROUP_LABELS[g] ?? g}</a>)}
        </nav>
        <form className="settings-form" onSubmit={(e) => { e.preventDefault(); if (canSave(state)) void onSave(); }} data-testid="settings-form">
          {GROUP_NAMES.map((g) => (
            <fieldset key={g} id={`group-${g}`} className="group">
              <legend>{GROUP_LABELS[g] ?? g}</legend>
              <SettingsFields
                path={[g]}
                value={draft[g]}
                onChange={(path, value) => {
                  if (path.join('.') === 'agentStack.preset' && typeof value === 'string') {
                    dispatch({ type: 'edit', draft: withPreset(draft, value) });
                    return;
                  }
                  dispatch({ type: 'edit', draft: setAt(draft, path, value) });
                }}
              />
              {g === 'agentStack' && <p className="hint">Changing the preset keeps your own overrides; everything else follows the preset <strong>{preset}</strong>.</p>}
            </fieldset>
          ))}
          <div className="save-bar" data-testid="save-bar">
            <span className={`save-status ${message ? `text-${message.tone}` : ''}`} role="status">
              {conflict ? 'Saving is disabled until the conflict above is resolved.' : message ? message.text : dirty ? 'You have unsaved changes.' : 'All changes saved.'}
            </span>
            <button type="button" className="btn" disabled={!dirty && !conflict} onClick={() => { setMessage(null); dispatch({ type: 'discard' }); }}>Discard</button>
            <button type="submit" className="btn btn-primary" disabled={!canSave(state) || saveState.fetching} data-testid="save-settings">
              {saveState.fetching ? 'Saving…' : 'Save settings'}
            </button>
          </div>
        </form>
      </div>
    </>
  );
}
