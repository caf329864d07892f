import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api-shapes.ts';
import { CopyButton } from '../copy-button.tsx';
import { ErrorNote } from '../error-note.tsx';

/** The inbound URL: made (shown once, replacing any earlier one) or turned off. The service keeps only its hash. */
export function InboundSection({ path, columns }: { path: string; columns: string[] }) {
  const [made, setMade] = useState<{ url: string; created_at: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const act = async (run: () => Promise<void>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await run();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const make = () => act(async () => setMade(await api('POST', `${path}/inbound`)));
  const turnOff = () =>
    act(async () => {
      const r = await api<Answer<'delete_inbound_url'>>('DELETE', `${path}/inbound`);
      setMade(undefined);
      setNotice(r.deleted ? 'The inbound URL is off: it answers 404 from now on.' : 'This project had no inbound URL.');
    });
  const example = made
    ? `curl -X POST '${made.url}' -H 'content-type: application/json' \\\n  -d '${JSON.stringify([Object.fromEntries(columns.map((c) => [c, '…']))])}'`
    : '';
  return (
    <section aria-labelledby="inbound-title">
      <h2 id="inbound-title">Inbound URL</h2>
      <p>
        Other systems (a form, Zapier, a script) add rows by POSTing JSON to this URL, with no API key: one object of column names and
        values, or an array of up to 1,000. The unique key applies, and auto-run columns start. The URL is the secret: it is shown once, and
        making a new one turns the old one off.
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={make}>
          Make an inbound URL
        </button>
        <button type="button" class="danger" onClick={turnOff}>
          Turn the inbound URL off
        </button>
      </div>
      <ErrorNote message={error} />
      {notice && (
        <p class="new-key" role="status">
          {notice}
        </p>
      )}
      {made && (
        <div class="new-key" role="status">
          <p>Inbound URL — copy it now, it will not be shown again:</p>
          <code data-testid="inbound-url">{made.url}</code> <CopyButton text={made.url} label="Copy URL" />
          <pre>{example}</pre>
        </div>
      )}
    </section>
  );
}
