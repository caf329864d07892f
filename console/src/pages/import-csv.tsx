import { useRef, useState } from 'preact/hooks';
import { boot, session } from '../api.ts';
import { ErrorNote } from '../error-note.tsx';
import { navigate } from '../router.ts';

/**
 * A CSV file becomes a project (POST /projects/import.csv, streamed: any size up to the service's
 * upload limit): picked or dropped here, uploaded with a progress bar, then the new table opens and
 * shows its import's progress.
 */
export function ImportCsv() {
  const picker = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const [sent, setSent] = useState<{ name: string; loaded: number; total: number } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const upload = (file: File) => {
    setError(undefined);
    if (!/\.(csv|txt)$/i.test(file.name) && file.type !== 'text/csv')
      return setError(`${file.name} is not a CSV file: save the sheet as “CSV UTF-8” and drop that file.`);
    const name = file.name.replace(/\.(csv|txt)$/i, '');
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${boot.basePath}/projects/import.csv?name=${encodeURIComponent(name)}`);
    xhr.setRequestHeader('content-type', 'text/csv');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('x-csrf-token', session().csrf_token);
    xhr.upload.onprogress = (e) => setSent({ name: file.name, loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      setSent(undefined);
      let body: { project_id?: string; detail?: string | { message?: string } } = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // an answer that is not JSON: said below by its status
      }
      if (xhr.status === 201 && body.project_id) return navigate(`/projects/${encodeURIComponent(body.project_id)}`);
      const detail = typeof body.detail === 'string' ? body.detail : body.detail?.message;
      setError(`${file.name} was not imported: ${detail ?? `the service answered ${xhr.status}`}`);
    };
    xhr.onerror = () => {
      setSent(undefined);
      setError(`${file.name} was not imported: the connection to the service was lost. Try again.`);
    };
    setSent({ name: file.name, loaded: 0, total: file.size });
    xhr.send(file);
  };
  const pct = sent ? Math.round((100 * sent.loaded) / Math.max(1, sent.total)) : 0;
  return (
    <section
      class={`drop-zone${over ? ' over' : ''}`}
      aria-label="Import a CSV file"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        const file = e.dataTransfer?.files[0];
        if (file) upload(file);
      }}
    >
      {sent ? (
        <p>
          Uploading {sent.name}: <progress max={100} value={pct} aria-label={`Uploading ${sent.name}`} /> {pct}%
        </p>
      ) : (
        <p>
          Drop a CSV file here, or{' '}
          <button type="button" class="link" onClick={() => picker.current?.click()}>
            choose a file
          </button>
          : it becomes a new project, one column per header.
        </p>
      )}
      <input
        ref={picker}
        type="file"
        accept=".csv,text/csv"
        class="sr-only"
        aria-label="CSV file to import"
        tabIndex={-1}
        onChange={(e) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (file) upload(file);
          (e.target as HTMLInputElement).value = '';
        }}
      />
      <ErrorNote message={error} />
    </section>
  );
}
