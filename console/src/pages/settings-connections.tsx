import { useEffect, useState } from 'preact/hooks';
import { type ApiError, account, boot } from '../api.ts';
import { ErrorNote } from '../error-note.tsx';
import { ListTable } from '../list-table.tsx';

interface Connection {
  id: string;
  client_id: string;
  client_name: string;
  scope: string;
  resource: string;
  connected_at: string;
  last_used_at: string;
}

const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * `/settings/connections`: the applications this person connected to this workspace by browser
 * sign-in (OAuth, docs/oauth.md), each with a Disconnect button that revokes its tokens.
 */
export function ConnectionsPage() {
  const [connections, setConnections] = useState<Connection[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const reload = () =>
    account<{ connections: Connection[] }>('GET', '/connections')
      .then((a) => setConnections(a.connections))
      .catch((e: ApiError) => setError(e.message));
  useEffect(() => void reload(), []);
  const disconnect = async (c: Connection) => {
    if (!confirm(`Disconnect ${c.client_name}? It stops working with this workspace until someone signs it in again.`)) return;
    setError(undefined);
    setNotice(undefined);
    try {
      await account('DELETE', `/connections/${encodeURIComponent(c.id)}`);
      setNotice(`${c.client_name} is disconnected: its tokens stop working within 15 seconds.`);
      await reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <main class="page">
      <h1>Settings · Connected apps</h1>
      <p>
        Applications you signed in to with your browser (Claude, Cursor, the MCP Inspector…) through the MCP endpoint{' '}
        <code>{boot.mcpUrl}</code>. Each acts as you in this workspace.
      </p>
      <ErrorNote message={error} />
      {notice && (
        <p class="new-key" role="status">
          {notice}
        </p>
      )}
      {connections && connections.length === 0 && <p>No application is connected to this workspace.</p>}
      {connections && connections.length > 0 && (
        <ListTable caption="Applications connected to this workspace" headings={['Application', 'Connected', 'Last used']} actions>
          {connections.map((c) => (
            <tr key={c.id}>
              <td>
                {c.client_name}
                <br />
                <small class="meta">{c.client_id}</small>
              </td>
              <td>{when(c.connected_at)}</td>
              <td>{when(c.last_used_at)}</td>
              <td>
                <button type="button" class="danger" onClick={() => disconnect(c)} aria-label={`Disconnect ${c.client_name}`}>
                  Disconnect
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </main>
  );
}
