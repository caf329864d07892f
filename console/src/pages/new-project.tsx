import { ErrorNote } from '../error-note.tsx';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import type { Schema } from '../api-shapes.ts';
import { navigate } from '../router.ts';
import { ImportCsv } from './import-csv.tsx';
import { type JsonSchema, pruned, SchemaFields } from './schema-form.tsx';

/** A builder whose form takes an `upload_id` (a file sent to POST /projects/import.csv). */
const takesFile = (schema: JsonSchema) => Boolean((schema as { properties?: Record<string, unknown> }).properties?.upload_id);

/** The form without its `upload_id` field: people send the file itself. */
function withoutUploadId(schema: JsonSchema): JsonSchema {
  const s = schema as { properties?: Record<string, unknown>; required?: string[] };
  if (!s.properties?.upload_id) return schema;
  const { upload_id: _, ...properties } = s.properties;
  return { ...s, properties, required: s.required?.filter((r) => r !== 'upload_id') } as JsonSchema;
}

/** A builder (GET /project-builders); its schema is the JSON Schema its form is drawn from. */
type Builder = Omit<Schema<'Builder'>, 'schema'> & { schema: JsonSchema };

/** `/projects/new`: pick a builder, fill its form (drawn from its schema), create the project and watch it fill. */
export function NewProjectPage() {
  const [builders, setBuilders] = useState<Builder[] | undefined>();
  const [chosen, setChosen] = useState<string | undefined>();
  const [form, setForm] = useState<Record<string, unknown>>({});
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<Builder[]>('GET', '/project-builders')
      .then(setBuilders)
      .catch((e: ApiError) => setError(e.message));
  }, []);
  const builder = builders?.find((b) => b.builder_id === chosen);
  const create = async (e: Event) => {
    e.preventDefault();
    if (!builder) return;
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      const body = {
        builder_id: builder.builder_id,
        form_data: pruned(form, builder.schema),
        ...(name.trim() ? { name: name.trim() } : {}),
      };
      const created = await api<{ project_id: string }>('POST', '/projects', body);
      navigate(`/projects/${encodeURIComponent(created.project_id)}`);
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setFields(err.fields);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="page">
      <h1>New project</h1>
      <ErrorNote message={error} />
      {builders && (
        <fieldset class="group builders">
          <legend>Start from</legend>
          {builders.map((b) => (
            <label key={b.builder_id} class="builder-choice">
              <input
                type="radio"
                name="builder"
                value={b.builder_id}
                checked={chosen === b.builder_id}
                onChange={() => {
                  setChosen(b.builder_id);
                  setForm({});
                  setFields({});
                }}
              />{' '}
              <strong>{b.name}</strong> — {b.summary}{' '}
              <small>
                ({b.cost.credits} credit{b.cost.credits === 1 ? '' : 's'} per {b.cost.per})
              </small>
            </label>
          ))}
        </fieldset>
      )}
      {builder && (
        <form class="stack wide" onSubmit={create} noValidate>
          <h2>{builder.name}</h2>
          <label for="project-name">Project name (optional)</label>
          <input id="project-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          {/* A file is sent by the drop zone (it becomes the project at once), not by typing an upload id. */}
          {takesFile(builder.schema) && <ImportCsv />}
          <SchemaFields schema={withoutUploadId(builder.schema)} path="form_data" value={form} errors={fields} onChange={setForm} />
          <button type="submit" class="primary" disabled={busy}>
            Create project
          </button>
        </form>
      )}
    </main>
  );
}
