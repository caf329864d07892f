import { ErrorNote } from '../error-note.tsx';
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, account, api, session } from '../api.ts';
import type { Answer } from '../api-shapes.ts';

type Credits = Answer<'get_credits'>;
interface Entry {
  id: number;
  kind: string;
  amount: number;
  plugin_id: string | null;
  project_id: string | null;
  note: string | null;
  created_at: string;
}

/** `/settings/credits`: balance and plan, credits spent per tool over 30 days (a bar chart with its numbers), the ledger. */
export function CreditsPage() {
  const [credits, setCredits] = useState<Credits | undefined>();
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  // Tools and builders by their names, as people know them (their ids are the API's).
  const [names, setNames] = useState<Record<string, string>>({});
  const manager = session().role !== 'member';
  useEffect(() => {
    Promise.all([api<Answer<'list_tools'>>('GET', '/tools'), api<Answer<'list_builders'>>('GET', '/project-builders')])
      .then(([tools, builders]) =>
        setNames(Object.fromEntries([...tools.map((x) => [x.tool_id, x.name]), ...builders.map((x) => [x.builder_id, x.name])])),
      )
      .catch(() => undefined); // the ids stay: still true, only less readable
    api<Credits>('GET', '/credits')
      .then(setCredits)
      .catch((e: ApiError) => setError(e.message));
    if (manager)
      account<{ entries: Entry[] }>('GET', '/ledger')
        .then((a) => setEntries(a.entries))
        .catch((e: ApiError) => setError(e.message));
  }, []);
  const most = Math.max(1, ...(credits?.usage.map((u) => u.credits) ?? []));
  return (
    <main class="page">
      <h1>Settings · Credits</h1>
      <ErrorNote message={error} />
      {credits && (
        <>
          <p class="balance">
            <strong data-testid="balance">{credits.balance.toLocaleString()}</strong> credits · plan <strong>{credits.plan}</strong>
            {credits.api_access ? '' : ' (no API access)'}
          </p>
          <h2 id="usage-title">Spent per tool, last 30 days</h2>
          {credits.usage.length === 0 ? (
            <p>Nothing spent in the last 30 days.</p>
          ) : (
            <table class="bars" aria-labelledby="usage-title">
              <tbody>
                {credits.usage.map((u) => (
                  <tr key={u.plugin_id}>
                    <th scope="row" title={u.plugin_id}>
                      {names[u.plugin_id] ?? u.plugin_id}
                    </th>
                    <td>
                      <span class="bar" style={{ width: `${Math.max(2, (u.credits / most) * 100)}%` }} aria-hidden="true" />
                    </td>
                    <td class="num">{u.credits.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      {manager && entries && (
        <section aria-labelledby="ledger-title">
          <h2 id="ledger-title">Ledger</h2>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num">
                  Credits
                </th>
                <th scope="col">Tool or builder</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{new Date(e.created_at).toLocaleString()}</td>
                  <td>{e.kind}</td>
                  <td class="num">{(e.amount > 0 ? '+' : '') + e.amount.toLocaleString()}</td>
                  <td title={e.plugin_id ?? undefined}>{e.plugin_id ? (names[e.plugin_id] ?? e.plugin_id) : '—'}</td>
                  <td>{e.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </main>
  );
}
