import { ErrorNote } from '../error-note.tsx';
import { ListTable } from '../list-table.tsx';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, account, session } from '../api.ts';

interface Member {
  user_id: string;
  email: string;
  role: 'owner' | 'admin' | 'member';
  since: string;
}

const ROLES = ['member', 'admin', 'owner'] as const;

/** `/settings/members`: who is in the workspace; owners and admins add people and set roles. */
export function MembersPage() {
  const [members, setMembers] = useState<Member[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [form, setForm] = useState({ email: '', role: 'member', password: '' });
  const me = session();
  const manager = me.role !== 'member';
  const reload = () =>
    account<{ members: Member[] }>('GET', '/members')
      .then((a) => setMembers(a.members))
      .catch((e: ApiError) => setError(e.message));
  useEffect(() => void reload(), []);
  const act = async (run: () => Promise<unknown>) => {
    setError(undefined);
    setFields({});
    try {
      await run();
      await reload();
      return true;
    } catch (e) {
      setError((e as Error).message);
      if (e instanceof ApiError) setFields(e.fields);
      return false;
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const body = { email: form.email, role: form.role, ...(form.password ? { password: form.password } : {}) };
    if (await act(() => account('POST', '/members', body))) setForm({ email: '', role: 'member', password: '' });
  };
  return (
    <main class="page">
      <h1>Settings · Members</h1>
      <ErrorNote message={error} />
      {members && (
        <ListTable caption="Members of this workspace" headings={['Email', 'Role', 'Since']} actions>
          {members.map((m) => (
            <tr key={m.user_id}>
              <td>{m.email}</td>
              <td>
                {manager ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    onChange={(e) => act(() => account('PATCH', `/members/${m.user_id}`, { role: (e.target as HTMLSelectElement).value }))}
                  >
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>{new Date(m.since).toLocaleDateString()}</td>
              <td>
                {manager && m.user_id !== me.user.id && (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Remove ${m.email}`}
                    onClick={() => act(() => account('DELETE', `/members/${m.user_id}`))}
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {manager && (
        <form class="stack" onSubmit={add}>
          <h2>Add a member</h2>
          <label for="member-email">Email</label>
          <input
            id="member-email"
            type="email"
            required
            value={form.email}
            onInput={(e) => setForm({ ...form, email: (e.target as HTMLInputElement).value })}
            aria-invalid={Boolean(fields.email)}
          />
          {fields.email && <span class="field-error">{fields.email}</span>}
          <label for="member-role">Role</label>
          <select id="member-role" value={form.role} onChange={(e) => setForm({ ...form, role: (e.target as HTMLSelectElement).value })}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <label for="member-password">First password (for someone without an account)</label>
          <input
            id="member-password"
            type="password"
            autoComplete="new-password"
            value={form.password}
            onInput={(e) => setForm({ ...form, password: (e.target as HTMLInputElement).value })}
            aria-invalid={Boolean(fields.password)}
          />
          {fields.password && <span class="field-error">{fields.password}</span>}
          <button type="submit" class="primary">
            Add member
          </button>
        </form>
      )}
    </main>
  );
}
