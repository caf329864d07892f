import { ErrorNote } from '../error-note.tsx';
import { ListTable } from '../list-table.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, account, boot, session } from '../api.ts';
import { CopyButton } from '../copy-button.tsx';

interface Key {
  prefix: string;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** The most credits the key may spend in a month; null for no cap. */
  monthly_credits: number | null;
  /** Spent this month (null when the key has no cap). */
  spent_this_month: number | null;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
const credits = (n: number) => n.toLocaleString('en-US');
const capText = (k: Key) =>
  k.monthly_credits === null ? 'No cap' : `${credits(k.spent_this_month ?? 0)} of ${credits(k.monthly_credits)} this month`;
const CAP_RULE = 'A monthly credit cap is a whole number of credits above 0; leave it empty for no cap.';

/**
 * What a cap input holds, as the service takes it: empty is null (no cap), anything else a number
 * the service judges (0 or 1.5 come back as its 422). Text the browser could not read as a number
 * is refused here, as it would otherwise read as empty.
 */
function capOf(input: HTMLInputElement): number | null {
  if (input.validity.badInput) throw new ApiError(422, CAP_RULE, { monthly_credits: 'must be a whole number above 0, or empty' });
  const value = input.value.trim();
  return value === '' ? null : Number(value);
}

/** The modal form that sets or removes a live key's monthly cap (Escape or Cancel closes it unchanged). */
function CapDialog({ item, onSaved, onClose }: { item: Key; onSaved: () => Promise<void>; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | undefined>();
  const [field, setField] = useState<string | undefined>();
  useEffect(() => dialog.current?.showModal(), []);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setField(undefined);
    try {
      const input = (e.currentTarget as HTMLFormElement).elements.namedItem('monthly_credits') as HTMLInputElement;
      await account('PUT', `/keys/${item.prefix}/cap`, { monthly_credits: capOf(input) });
      await onSaved();
      dialog.current?.close();
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setField(err.fields.monthly_credits);
    }
  };
  return (
    <dialog ref={dialog} class="cap" aria-labelledby="cap-title" onClose={onClose}>
      <form class="stack" noValidate onSubmit={save}>
        <h2 id="cap-title">
          Monthly cap of <code>{item.prefix}</code>
        </h2>
        <ErrorNote message={error} />
        <label for="cap-input">Monthly credit cap of {item.prefix}</label>
        <input
          id="cap-input"
          name="monthly_credits"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          placeholder="No cap"
          defaultValue={item.monthly_credits === null ? '' : String(item.monthly_credits)}
          aria-invalid={Boolean(field)}
          aria-describedby={field ? 'cap-hint cap-error' : 'cap-hint'}
        />
        {field && (
          <span id="cap-error" class="field-error">
            {field}
          </span>
        )}
        <span id="cap-hint" class="hint">
          Leave empty for no cap. {item.monthly_credits === null ? '' : `Spent this month: ${credits(item.spent_this_month ?? 0)}.`}
        </span>
        <div class="actions">
          <button type="submit" class="primary">
            Save cap
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * `/settings/integration?tab=api` (the spec's Settings → Integrations → API): the workspace's keys,
 * Create key (with an optional monthly credit cap) and Rotate (the whole key shown once, with a
 * copy button), Change cap, Revoke, and the MCP client configuration to paste.
 */
export function ApiKeysPage() {
  const [keys, setKeys] = useState<Key[] | undefined>();
  const [shown, setShown] = useState<{ api_key: string; prefix: string; replaces?: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [editing, setEditing] = useState<Key | undefined>();
  const manager = session().role !== 'member';

  const reload = () =>
    account<{ keys: Key[] }>('GET', '/keys')
      .then((a) => setKeys(a.keys))
      .catch((e: ApiError) => setError(e.message));
  useEffect(() => {
    if (manager) void reload();
  }, []);

  const act = async (run: () => Promise<void>) => {
    setError(undefined);
    setFields({});
    try {
      await run();
      await reload();
    } catch (e) {
      setError((e as Error).message);
      if (e instanceof ApiError) setFields(e.fields);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    const input = (e.currentTarget as HTMLFormElement).elements.namedItem('monthly_credits') as HTMLInputElement;
    return act(async () => {
      setShown(await account('POST', '/keys', { monthly_credits: capOf(input) }));
      input.value = '';
    });
  };
  // Rotating ends the old key at once, as revoking does: both ask first.
  const rotate = (prefix: string) =>
    act(async () => {
      if (!confirm(`Rotate ${prefix}? It stops working now; programs using it need the new key shown next.`)) return;
      setShown(await account('POST', `/keys/${prefix}/rotate`));
    });
  const revoke = (prefix: string) =>
    act(async () => {
      if (!confirm(`Revoke ${prefix}? Programs using it get 401 from now on.`)) return;
      await account('DELETE', `/keys/${prefix}`);
      if (shown?.prefix === prefix) setShown(undefined);
    });

  const mcp = JSON.stringify(
    { mcpServers: { 'workflow-service': { url: boot.mcpUrl, headers: { 'service-api-key': shown?.api_key ?? '<your API key>' } } } },
    null,
    2,
  );
  return (
    <main class="page">
      <h1>Settings · Integrations · API</h1>
      {!manager && <p>Only owners and admins of this workspace manage its API keys; ask one of them for a key.</p>}
      <ErrorNote message={error} />
      {manager && (
        <section aria-labelledby="keys-title">
          <h2 id="keys-title">API keys</h2>
          <p>
            Programs send a key in the <code>service-api-key</code> header. A key is shown once, when it is created or rotated.
          </p>
          <form class="toolbar key-create" noValidate onSubmit={create}>
            <label for="key-cap">Monthly credit cap</label>
            <input
              id="key-cap"
              name="monthly_credits"
              type="number"
              min={1}
              step={1}
              inputMode="numeric"
              placeholder="No cap"
              aria-invalid={Boolean(fields.monthly_credits)}
              aria-describedby={fields.monthly_credits ? 'key-cap-hint key-cap-error' : 'key-cap-hint'}
            />
            <button type="submit" class="primary">
              Create key
            </button>
          </form>
          {fields.monthly_credits && (
            <p id="key-cap-error" class="field-error">
              {fields.monthly_credits}
            </p>
          )}
          <p id="key-cap-hint" class="hint">
            Optional: the most credits the new key may spend in a calendar month, UTC (past it, its calls that cost credits get 402); empty
            for no cap. A rotated key keeps its cap.
          </p>
          {shown && (
            <div class="new-key" role="status">
              <p>{shown.replaces ? `New key replacing ${shown.replaces}` : 'New key'} — copy it now, it will not be shown again:</p>
              <code data-testid="new-key">{shown.api_key}</code> <CopyButton text={shown.api_key} label="Copy key" />
            </div>
          )}
          {keys && (
            <ListTable
              caption="API keys of this workspace"
              headings={['Key', 'Created', 'Created by', 'Last used', 'Monthly cap', 'State']}
              actions
            >
              {keys.map((k) => (
                <tr key={k.prefix} data-prefix={k.prefix}>
                  <td>
                    <code>{k.prefix}_…</code>
                  </td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.created_by ?? 'admin CLI'}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td data-testid="cap">{capText(k)}</td>
                  <td>{k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active'}</td>
                  <td class="actions">
                    {!k.revoked_at && (
                      <>
                        <button type="button" onClick={() => setEditing(k)} aria-label={`Change cap of ${k.prefix}`}>
                          Change cap
                        </button>
                        <button type="button" onClick={() => rotate(k.prefix)} aria-label={`Rotate ${k.prefix}`}>
                          Rotate
                        </button>
                        <button type="button" class="danger" onClick={() => revoke(k.prefix)} aria-label={`Revoke ${k.prefix}`}>
                          Revoke
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </ListTable>
          )}
          {editing && <CapDialog key={editing.prefix} item={editing} onSaved={reload} onClose={() => setEditing(undefined)} />}
        </section>
      )}
      <section aria-labelledby="mcp-title">
        <h2 id="mcp-title">MCP clients</h2>
        <p>
          Clients that sign in with the browser (Claude, Cursor, the MCP Inspector) need only the URL{' '}
          <code data-testid="mcp-url">{boot.mcpUrl}</code>: they open this site, you sign in and choose Allow. They are listed under{' '}
          <a href="/settings/connections">Connected apps</a>.
        </p>
        <p>For programs and clients without browser sign-in, paste this into their configuration, with one of your keys:</p>
        <pre data-testid="mcp-config">{mcp}</pre>
        <CopyButton text={mcp} label="Copy configuration" />
      </section>
    </main>
  );
}
