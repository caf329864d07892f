import { ErrorNote } from '../error-note.tsx';
import { ListTable } from '../list-table.tsx';
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, account, boot, session } from '../api.ts';

interface Key {
  prefix: string;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard.writeText(text);
        setDone(true);
        setTimeout(() => setDone(false), 2000);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/**
 * `/settings/integration?tab=api` (the spec's Settings → Integrations → API): the workspace's keys,
 * Create key and Rotate (the whole key shown once, with a copy button), Revoke, and the MCP client
 * configuration to paste.
 */
export function ApiKeysPage() {
  const [keys, setKeys] = useState<Key[] | undefined>();
  const [shown, setShown] = useState<{ api_key: string; prefix: string; replaces?: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
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
    try {
      await run();
      await reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const create = () => act(async () => setShown(await account('POST', '/keys')));
  const rotate = (prefix: string) => act(async () => setShown(await account('POST', `/keys/${prefix}/rotate`)));
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
          <button type="button" class="primary" onClick={create}>
            Create key
          </button>
          {shown && (
            <div class="new-key" role="status">
              <p>{shown.replaces ? `New key replacing ${shown.replaces}` : 'New key'} — copy it now, it will not be shown again:</p>
              <code data-testid="new-key">{shown.api_key}</code> <CopyButton text={shown.api_key} label="Copy key" />
            </div>
          )}
          {keys && (
            <ListTable caption="API keys of this workspace" headings={['Key', 'Created', 'Created by', 'Last used', 'State']} actions>
              {keys.map((k) => (
                <tr key={k.prefix} data-prefix={k.prefix}>
                  <td>
                    <code>{k.prefix}_…</code>
                  </td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.created_by ?? 'admin CLI'}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>{k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active'}</td>
                  <td class="actions">
                    {!k.revoked_at && (
                      <>
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
