import { ErrorNote } from '../error-note.tsx';
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api } from '../api.ts';
import type { Answer, Schema } from '../api-shapes.ts';
import { ImportCsv } from './import-csv.tsx';

type ProjectSummary = Schema<'ProjectSummary'>;

const PAGE = 20;

/** `/`: the workspace's projects, newest change first, with a name search and paging. */
export function ProjectsPage() {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [answer, setAnswer] = useState<{ projects: ProjectSummary[]; total: number } | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    const q = new URLSearchParams({ limit: String(PAGE), page: String(page) });
    if (search.trim()) q.set('name_search', search.trim());
    let stale = false;
    api<Answer<'list_projects'>>('GET', `/projects?${q}`)
      .then((a) => {
        if (stale) return;
        setAnswer(a);
        setError(undefined);
      })
      .catch((e: ApiError) => !stale && setError(e.message));
    return () => {
      stale = true;
    };
  }, [search, page]);

  const pages = Math.max(1, Math.ceil((answer?.total ?? 0) / PAGE));
  return (
    <main class="page">
      <h1>Projects</h1>
      <p>
        <a href="/projects/new" class="button primary">
          New project
        </a>
      </p>
      <ImportCsv />
      <div class="toolbar">
        <label for="project-search">Search by name</label>
        <input
          id="project-search"
          type="search"
          value={search}
          onInput={(e) => {
            setSearch((e.target as HTMLInputElement).value);
            setPage(1);
          }}
        />
      </div>
      <ErrorNote message={error} />
      {answer && answer.projects.length === 0 && <p>No project yet{search ? ' with this name' : ''}. Start one with New project.</p>}
      {answer && answer.projects.length > 0 && (
        <table class="list">
          <caption class="sr-only">Projects of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="num">
                Rows
              </th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {answer.projects.map((p) => (
              <tr key={p.id}>
                <td>
                  <a href={`/projects/${encodeURIComponent(p.id)}`}>{p.name}</a>
                </td>
                <td class="num">{p.company_count.toLocaleString()}</td>
                <td>{new Date(p.updatedAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {answer && answer.total > PAGE && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {pages}
          </span>
          <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </main>
  );
}
