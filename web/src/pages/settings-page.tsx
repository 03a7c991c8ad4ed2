import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type QueueView } from '../api.js';
import type { QueueRef } from '../route.js';
import { BackToQueue, ErrorAlert, when } from './parts.js';
import { changedSettings, chosenByQueue, formValuesOf, SETTING_GROUPS, type FormValues, type SettingField } from './settings-form.js';

/**
 * The queue's settings, and a form for them (updateQueue, sending only what was changed). Where the repository's queue
 * file names the queue, the file wins: the page shows the settings and which commit they came from, read-only.
 */
export function SettingsPage({ queue }: { queue: QueueRef }) {
  const [view, setView] = useState<QueueView | null>(null);
  const [loaded, setLoaded] = useState<FormValues | null>(null);
  const [values, setValues] = useState<FormValues | null>(null);
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');
  const [saving, setSaving] = useState(false);
  const load = useCallback(
    () =>
      api.queue(queue.repo, queue.targetBranch).then(
        (q) => {
          const read = formValuesOf(q);
          setView(q);
          setLoaded(read);
          setValues(read);
        },
        (e: Error) => setError(e.message),
      ),
    [queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch],
  );
  useEffect(() => void load(), [load]);
  if (!view || !loaded || !values) return error ? <ErrorAlert error={error} /> : <p class="loading">Loading…</p>;
  const fromFile = view.configuredBy === 'api' ? null : view.configuredBy;
  const set = (key: SettingField['key'], value: string | boolean) => {
    setValues({ ...values, [key]: value });
    setSaved('');
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const body = changedSettings(loaded, values);
    const names = Object.keys(body).map((k) => (k === 'deleteRequiredStatuses' ? 'requiredStatuses' : k));
    // Nothing changed: no call (an update naming only the queue is not nothing: it tries a blocked landing at once).
    if (names.length === 0) return setSaved('Nothing changed.');
    setSaving(true);
    try {
      await api.updateSettings(queue.repo, queue.targetBranch, body);
      setError('');
      await load();
      setSaved(`Saved: ${names.join(', ')}.`);
    } catch (e) {
      // The API's own message (which setting, what is wrong): the form keeps what was typed.
      setError(e instanceof Error ? e.message : String(e));
      setSaved('');
    } finally {
      setSaving(false);
    }
  };
  return (
    <section>
      <BackToQueue queue={queue} />
      <h1>Settings</h1>
      {fromFile ? (
        <p class="hint" role="note">
          From <code>{fromFile.file}</code> at {fromFile.commitSha.slice(0, 7)} (applied {when(fromFile.appliedAt)}): the file wins, so change it there. Pause, drain and resume are on the
          queue's page.
        </p>
      ) : (
        <p class="hint">Set through the API (updateQueue). Only what you change is sent: a setting someone else changed meanwhile stays theirs.</p>
      )}
      <form onSubmit={(e) => void save(e)} noValidate class="settings">
        <fieldset disabled={fromFile !== null || saving}>
          {SETTING_GROUPS.map((group) => (
            <fieldset key={group.title} class="group">
              <legend>{group.title}</legend>
              {group.fields.map((field) => (
                <Field key={field.key} field={field} value={values[field.key]} chosen={chosenByQueue(field.key, values)} onChange={(v) => set(field.key, v)} />
              ))}
            </fieldset>
          ))}
          {!fromFile && (
            <p class="actions">
              <button type="submit">Save</button>
              <button type="button" onClick={() => (setValues(loaded), setError(''), setSaved(''))}>
                Undo changes
              </button>
            </p>
          )}
        </fieldset>
      </form>
      <ErrorAlert error={error} />
      {saved && (
        <p role="status" class="ok">
          {saved}
        </p>
      )}
    </section>
  );
}

function Field({ field, value, chosen, onChange }: { field: SettingField; value: string | boolean; chosen: boolean; onChange: (value: string | boolean) => void }) {
  const id = `setting-${field.key}`;
  const hint = chosen ? `Chosen by the queue (tuning adaptive). ${field.hint}` : field.hint;
  const described = `${id}-hint`;
  const input =
    field.kind === 'boolean' ? (
      <input id={id} type="checkbox" checked={value === true} disabled={chosen} aria-describedby={described} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
    ) : field.kind === 'choice' ? (
      <select id={id} value={String(value)} disabled={chosen} aria-describedby={described} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {(field.choices ?? []).map((choice) => (
          <option key={choice} value={choice}>
            {choice.replace('_', ' ')}
          </option>
        ))}
      </select>
    ) : field.kind === 'number' ? (
      <input id={id} type="number" inputMode="numeric" min={field.min} max={field.max} value={String(value)} disabled={chosen} aria-describedby={described} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    ) : (
      <input id={id} type="text" value={String(value)} disabled={chosen} aria-describedby={described} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    );
  return (
    <div class="setting">
      <label for={id}>{field.label}</label>
      {input}
      <span id={described} class="hint">
        {hint}
      </span>
    </div>
  );
}
