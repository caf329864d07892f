import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import type { Answer } from '../api-shapes.ts';
import { CopyButton } from '../copy-button.tsx';
import { ErrorNote } from '../error-note.tsx';
import { CheckboxGroup } from '../checkbox-group.tsx';
import { TextField } from '../text-field.tsx';
import { ListTable } from '../list-table.tsx';
import { location$, navigate } from '../router.ts';

type Webhook = Answer<'list_webhooks'>['webhooks'][number];
type Delivery = Answer<'list_webhook_deliveries'>['deliveries'][number];

/** The events a webhook may ask for, as the service names them, and what each means. */
const EVENTS = [
  { id: 'builder.completed', text: 'a builder run completed (with the rows it created)' },
  { id: 'builder.failed', text: 'a builder run failed (with the error)' },
  { id: 'column.completed', text: 'a tool column has no cell queued or running left' },
  { id: 'row.enriched', text: 'a tool result was written and the row has nothing left to run (with the row)' },
] satisfies { id: Webhook['events'][number]; text: string }[];

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
/** Deliveries per page of the log. */
const PAGE = 20;

/** One webhook's delivery log, newest first: status, attempts, the endpoint's last answer, and Re-send. Pending ones are followed. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const base = `/webhooks/${encodeURIComponent(webhook.id)}/deliveries`;
  /** The newest deliveries again, as many as are shown (older pages included, up to the service's 100). */
  const reload = async (count = deliveries?.length ?? PAGE) => {
    const page = await api<Answer<'list_webhook_deliveries'>>('GET', `${base}?limit=${Math.min(100, Math.max(PAGE, count))}`);
    setDeliveries(page.deliveries);
    setNext(page.next_before);
  };
  useEffect(() => {
    reload(PAGE).catch((e: ApiError) => setError(e.message));
  }, [webhook.id]);
  // While a delivery is still to be sent, the log is read again every 2 s (its attempts and answer change).
  const pending = deliveries?.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => reload().catch(() => undefined), 2000);
    return () => clearInterval(timer);
  }, [pending, deliveries?.length]);
  const older = async () => {
    setError(undefined);
    try {
      const page = await api<Answer<'list_webhook_deliveries'>>('GET', `${base}?limit=${PAGE}&before=${encodeURIComponent(next ?? '')}`);
      setDeliveries([...(deliveries ?? []), ...page.deliveries]);
      setNext(page.next_before);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const resend = async (d: Delivery) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await api('POST', `${base}/${encodeURIComponent(d.id)}/resend`);
      setNotice(`The ${d.event_type} event is sent again now, with the same webhook-id (${d.id}).`);
      await reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to {webhook.url}</h2>
      <p>
        Every event sent to this webhook, newest first. An endpoint that does not answer 2xx is tried again, less and less often, for a day
        (24 hours unless the operator changed it); then the delivery has failed. Re-send sends one again now, for another day, with its{' '}
        <code>webhook-id</code> unchanged (receivers dedupe on it).
      </p>
      <div class="toolbar">
        <button type="button" onClick={() => reload().catch((e: ApiError) => setError(e.message))}>
          Refresh
        </button>
        <a href="/settings/webhooks">Close the log</a>
      </div>
      <ErrorNote message={error} />
      {notice && (
        <p class="new-key" role="status">
          {notice}
        </p>
      )}
      {deliveries && deliveries.length === 0 && <p>Nothing sent yet: events appear here as they happen.</p>}
      {deliveries && deliveries.length > 0 && (
        <ListTable
          caption={`Deliveries to ${webhook.url}`}
          headings={['Event', 'Time', 'Status', 'Attempts', 'Response', 'Error', 'Last attempt']}
          actions
        >
          {deliveries.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td>
                <details>
                  <summary>{d.event_type}</summary>
                  <small class="meta">{d.id}</small>
                  <pre>{JSON.stringify(d.payload, null, 2)}</pre>
                </details>
              </td>
              <td>
                <time dateTime={d.created_at}>{when(d.created_at)}</time>
              </td>
              <td data-testid="status">
                <span class={`badge badge-${d.status}`}>{d.status}</span>
                {d.status === 'pending' && d.next_attempt_at && <small class="meta"> next try {when(d.next_attempt_at)}</small>}
              </td>
              <td data-testid="attempts">{d.attempts}</td>
              <td data-testid="response">{d.response_status ?? 'no answer'}</td>
              <td data-testid="error">{d.error ?? '—'}</td>
              <td>{when(d.last_attempt_at)}</td>
              <td>
                <div class="actions">
                  <button type="button" onClick={() => resend(d)} aria-label={`Re-send ${d.event_type} ${d.id}`}>
                    Re-send
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {next && (
        <p>
          <button type="button" onClick={older}>
            Older deliveries
          </button>
        </p>
      )}
    </section>
  );
}

/**
 * `/settings/webhooks`: the workspace's webhooks (the events sent to other systems), Create webhook
 * (the signing secret shown once, with a copy button), Delete, and each one's delivery log
 * (`?deliveries={id}`) with Re-send.
 */
export function WebhooksPage() {
  const at = new URL(location$.use(), location.origin);
  const open = at.searchParams.get('deliveries');
  const [webhooks, setWebhooks] = useState<Webhook[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [formError, setFormError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<(Webhook & { secret: string }) | undefined>();
  const [form, setForm] = useState<{ url: string; events: string[]; description: string }>({ url: '', events: [], description: '' });
  const reload = () =>
    api<Answer<'list_webhooks'>>('GET', '/webhooks')
      .then((a) => setWebhooks(a.webhooks))
      .catch((e: ApiError) => setError(e.message));
  useEffect(() => void reload(), []);
  const create = async (e: Event) => {
    e.preventDefault();
    setFormError(undefined);
    setFields({});
    setCreated(undefined);
    try {
      // The events in the order the service lists them.
      const events = EVENTS.map((x) => x.id).filter((id) => form.events.includes(id));
      const body = { url: form.url.trim(), events, ...(form.description.trim() ? { description: form.description.trim() } : {}) };
      setCreated(await api('POST', '/webhooks', body));
      setForm({ url: '', events: [], description: '' });
      await reload();
    } catch (err) {
      setFormError((err as Error).message);
      if (err instanceof ApiError) setFields(err.fields);
    }
  };
  const remove = async (w: Webhook) => {
    if (!confirm(`Delete the webhook to ${w.url}? No more events go there, and its delivery log is forgotten.`)) return;
    setError(undefined);
    try {
      await api('DELETE', `/webhooks/${encodeURIComponent(w.id)}`);
      if (created?.id === w.id) setCreated(undefined);
      if (open === w.id) navigate('/settings/webhooks');
      await reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const toggle = (id: string, on: boolean) =>
    setForm({ ...form, events: on ? [...form.events.filter((x) => x !== id), id] : form.events.filter((x) => x !== id) });
  const eventsError = Object.entries(fields).find(([k]) => k === 'events' || k.startsWith('events['))?.[1];
  const shown = webhooks?.find((w) => w.id === open);
  return (
    <main class="page">
      <h1>Settings · Webhooks</h1>
      <p>
        A webhook sends this workspace's events to another system as they happen: a POST of JSON <code>{'{type, timestamp, data}'}</code>{' '}
        signed as <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> says (the <code>webhook-id</code>,{' '}
        <code>webhook-timestamp</code> and <code>webhook-signature</code> headers; any Standard Webhooks library checks them with the
        secret).
      </p>
      <ErrorNote message={error} />
      {webhooks && webhooks.length === 0 && <p>No webhook yet.</p>}
      {webhooks && webhooks.length > 0 && <WebhookTable webhooks={webhooks} open={open} onDelete={remove} />}
      {shown && <Deliveries key={shown.id} webhook={shown} />}
      {webhooks && open && !shown && <ErrorNote message="This webhook does not exist in this workspace (deleted?)." />}
      <form class="stack wide" noValidate onSubmit={create}>
        <h2>Create a webhook</h2>
        <TextField
          id="webhook-url"
          label="Endpoint URL"
          error={fields.url}
          hint="http(s), reachable on the internet; a secret for your side may go in its path or query."
          type="url"
          placeholder="https://hooks.example.com/workflow"
          value={form.url}
          onInput={(e) => setForm({ ...form, url: (e.target as HTMLInputElement).value })}
        />
        <CheckboxGroup
          legend="Events"
          name="events"
          options={EVENTS.map((ev) => ({
            value: ev.id,
            label: (
              <>
                <code>{ev.id}</code>: {ev.text}
              </>
            ),
          }))}
          checked={form.events}
          onToggle={toggle}
          {...(eventsError ? { describedBy: 'webhook-events-error' } : {})}
        >
          {eventsError && (
            <span id="webhook-events-error" class="field-error">
              {eventsError}
            </span>
          )}
        </CheckboxGroup>
        <label for="webhook-description">Description (optional)</label>
        <input
          id="webhook-description"
          maxLength={500}
          value={form.description}
          onInput={(e) => setForm({ ...form, description: (e.target as HTMLInputElement).value })}
          aria-invalid={Boolean(fields.description)}
        />
        <ErrorNote message={formError} />
        <button type="submit" class="primary">
          Create webhook
        </button>
      </form>
      {created && (
        <div class="new-key" role="status">
          <p>Webhook to {created.url} created. Its signing secret — copy it now, it will not be shown again:</p>
          <code data-testid="new-secret">{created.secret}</code> <CopyButton text={created.secret} label="Copy secret" />
        </div>
      )}
    </main>
  );
}

/** The workspace's webhooks, each with its delivery log's link and Delete. */
function WebhookTable({ webhooks, open, onDelete }: { webhooks: Webhook[]; open: string | null; onDelete(w: Webhook): void }) {
  return (
    <ListTable caption="Webhooks of this workspace" headings={['URL', 'Events', 'Description', 'Created']} actions>
      {webhooks.map((w) => (
        <tr key={w.id} data-webhook={w.id}>
          <td>
            <code>{w.url}</code>
          </td>
          <td>{w.events.join(', ')}</td>
          <td>{w.description || '—'}</td>
          <td>{when(w.created_at)}</td>
          <td>
            <div class="actions">
              <a
                href={`/settings/webhooks?deliveries=${encodeURIComponent(w.id)}`}
                class="button"
                aria-label={`Deliveries to ${w.url}`}
                aria-current={open === w.id ? 'true' : undefined}
              >
                Deliveries
              </a>
              <button type="button" class="danger" onClick={() => onDelete(w)} aria-label={`Delete the webhook to ${w.url}`}>
                Delete
              </button>
            </div>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
