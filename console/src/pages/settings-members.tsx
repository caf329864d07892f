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

interface Invitation {
  id: string;
  email: string;
  role: string;
  invited_at: string;
}

interface MyInvitation {
  id: string;
  workspace: { id: string; name: string };
  role: string;
}

const ROLES = ['member', 'admin', 'owner'] as const;

/** `/settings/members`: who is in the workspace; owners and admins add people and set roles. */
export function MembersPage() {
  const [members, setMembers] = useState<Member[] | undefined>();
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [mine, setMine] = useState<MyInvitation[]>([]);
  const [notice, setNotice] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [form, setForm] = useState({ email: '', role: 'member', password: '' });
  const me = session();
  const manager = me.role !== 'member';
  const reload = () =>
    Promise.all([
      account<{ members: Member[]; invitations: Invitation[] }>('GET', '/members').then((a) => {
        setMembers(a.members);
        setInvitations(a.invitations ?? []);
      }),
      account<{ invitations: MyInvitation[] }>('GET', '/invitations').then((a) => setMine(a.invitations)),
    ]).catch((e: ApiError) => setError(e.message));
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
    setNotice(undefined);
    if (await act(() => account('POST', '/members', body))) {
      setNotice(`Invitation sent to ${form.email.trim().toLowerCase()}: they join when they accept it (a new person, by signing in).`);
      setForm({ email: '', role: 'member', password: '' });
    }
  };
  return (
    <main class="page">
      <h1>Settings · Members</h1>
      <ErrorNote message={error} />
      {notice && <p role="status">{notice}</p>}
      {mine.length > 0 && (
        <ListTable caption="Invitations to you" headings={['Workspace', 'Role']} actions>
          {mine.map((i) => (
            <tr key={i.id}>
              <td>{i.workspace.name}</td>
              <td>{i.role}</td>
              <td>
                <button type="button" class="primary" onClick={() => act(() => account('POST', `/invitations/${i.id}/accept`))}>
                  Accept {i.workspace.name}
                </button>{' '}
                <button type="button" onClick={() => act(() => account('DELETE', `/invitations/${i.id}`))}>
                  Decline {i.workspace.name}
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {members && <MembersTable members={members} manager={manager} myId={me.user.id} act={act} />}
      {manager && invitations.length > 0 && (
        <ListTable caption="Invited, not yet accepted" headings={['Email', 'Role', 'Invited']} actions>
          {invitations.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>{new Date(i.invited_at).toLocaleDateString()}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Withdraw the invitation of ${i.email}`}
                  onClick={() => act(() => account('DELETE', `/invitations/${i.id}`))}
                >
                  Withdraw
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {manager && (
        <form class="stack" onSubmit={add}>
          <h2>Invite a member</h2>
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
          <label for="member-password">First password (for someone new: they sign in with it)</label>
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
            Invite
          </button>
        </form>
      )}
    </main>
  );
}

/** The workspace's members: a manager sets roles and removes others. */
function MembersTable(props: { members: Member[]; manager: boolean; myId: string; act(run: () => Promise<unknown>): Promise<boolean> }) {
  const { members, manager, myId, act } = props;
  return (
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
            {manager && m.user_id !== myId && (
              <button
                type="button"
                class="danger"
                aria-label={`Remove ${m.email}`}
                onClick={() => {
                  if (
                    confirm(`Remove ${m.email} from this workspace? Their sessions here end now and the API keys they made stop working.`)
                  )
                    void act(() => account('DELETE', `/members/${m.user_id}`));
                }}
              >
                Remove
              </button>
            )}
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
