import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api } from '../api.ts';
import { ErrorNote } from '../error-note.tsx';
import { InboundSection } from './inbound-section.tsx';
import type { Project } from './project-settings-types.ts';
import { ScheduleSection } from './schedule-section.tsx';
import { UniqueKey } from './unique-key-section.tsx';

/** `/projects/{id}/settings`: the project's unique key, its builder's schedule and its inbound URL. */
export function ProjectSettingsPage({ id }: { id: string }) {
  const [project, setProject] = useState<Project | undefined>();
  const [error, setError] = useState<string | undefined>();
  const path = `/projects/${encodeURIComponent(id)}`;
  useEffect(() => {
    setProject(undefined);
    api<Project>('GET', path)
      .then(setProject)
      .catch((e: ApiError) => setError(e.status === 404 ? 'This project does not exist in this workspace.' : e.message));
  }, [id]);
  return (
    <main class="page">
      <p>
        <a href={path}>← Back to the table</a>
      </p>
      <h1>{project ? `${project.name} · Settings` : 'Project settings'}</h1>
      <ErrorNote message={error} />
      {project && (
        <>
          <UniqueKey key={project.id} project={project} path={path} onSaved={(settings) => setProject({ ...project, settings })} />
          <ScheduleSection key={`schedule-${project.id}`} project={project} path={path} />
          <InboundSection
            key={`inbound-${project.id}`}
            path={path}
            columns={project.columns.filter((c) => c.type === 'input').map((c) => c.name)}
          />
        </>
      )}
    </main>
  );
}
