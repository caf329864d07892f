import { render } from 'preact';
import { loadSession, session } from './api.ts';
import { NewProjectPage } from './pages/new-project.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { ProjectSettingsPage } from './pages/project-settings.tsx';
import { ProjectTablePage } from './pages/table/project-table.tsx';
import { ApiKeysPage } from './pages/settings-api.tsx';
import { CreditsPage } from './pages/settings-credits.tsx';
import { MembersPage } from './pages/settings-members.tsx';
import { ConnectionsPage } from './pages/settings-connections.tsx';
import { WebhooksPage } from './pages/settings-webhooks.tsx';
import { location$ } from './router.ts';
import './styles.css';

// The grid's colours follow the system's scheme as the page's do (styles.css): AG Grid reads this attribute.
const dark = matchMedia('(prefers-color-scheme: dark)');
const followScheme = () => {
  document.body.dataset.agThemeMode = dark.matches ? 'dark' : 'light';
};
followScheme();
dark.addEventListener('change', followScheme);

/** The console (docs/console.md): one page app over the same REST operations, with the session. */

function Page() {
  const at = location$.use();
  const url = new URL(at, location.origin);
  const project = /^\/projects\/([^/]+)$/.exec(url.pathname);
  const projectSettings = /^\/projects\/([^/]+)\/settings$/.exec(url.pathname);
  if (url.pathname === '/' || url.pathname === '/projects') return <ProjectsPage />;
  if (url.pathname === '/projects/new') return <NewProjectPage />;
  if (project?.[1]) return <ProjectTablePage id={decodeURIComponent(project[1])} />;
  if (projectSettings?.[1]) return <ProjectSettingsPage id={decodeURIComponent(projectSettings[1])} />;
  if (url.pathname === '/settings/integration') return <ApiKeysPage />;
  if (url.pathname === '/settings/credits') return <CreditsPage />;
  if (url.pathname === '/settings/members') return <MembersPage />;
  if (url.pathname === '/settings/connections') return <ConnectionsPage />;
  if (url.pathname === '/settings/webhooks') return <WebhooksPage />;
  return (
    <main class="page">
      <h1>Not found</h1>
      <p>
        Nothing here. <a href="/">Back to the projects</a>
      </p>
    </main>
  );
}

/** The settings' pages, as the nav names them (the spec's "Settings → Integrations → API" first). */
const SETTINGS: [string, string][] = [
  ['/settings/integration?tab=api', 'Integrations → API'],
  ['/settings/credits', 'Credits'],
  ['/settings/members', 'Members'],
  ['/settings/connections', 'Connected apps'],
  ['/settings/webhooks', 'Webhooks'],
];

function Layout() {
  const s = session();
  const at = location$.use();
  const inSettings = at.startsWith('/settings/');
  return (
    <>
      <header class="top">
        <nav aria-label="Main">
          <a href="/" class="brand">
            Workflow Service
          </a>
          <a href="/" aria-current={inSettings ? undefined : 'page'}>
            Projects
          </a>
          <a href="/settings/integration?tab=api" aria-current={inSettings ? 'page' : undefined}>
            Settings
          </a>
        </nav>
        <div class="who">
          <span>
            {s.user.email} · {s.workspace.name} ({s.role})
          </span>
          <form method="post" action="/logout">
            <input type="hidden" name="csrf_token" value={s.csrf_token} />
            <button type="submit" class="link">
              Sign out
            </button>
          </form>
        </div>
      </header>
      {inSettings && (
        <nav class="sub-nav" aria-label="Settings">
          {SETTINGS.map(([href, label]) => (
            <a key={href} href={href} aria-current={at.startsWith(href.split('?')[0] as string) ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
      )}
      <Page />
    </>
  );
}

const root = document.getElementById('app') as HTMLElement;
loadSession().then((s) => {
  if (s) render(<Layout />, root);
});
