import type { Workspace } from '../../../core/model.ts';
import type { AuthorizeRequest } from '../../../core/identity/oauth/authorize.ts';
import { escapeHtml, htmlPage } from '../signin/html-page.ts';

/** Where the person returns after deciding, in words: a loopback redirect is an app on this computer. */
function destination(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) return `an application on this computer (${url.host})`;
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.host : `the application (${url.protocol.replace(/:$/, '')})`;
}

/**
 * The consent page of GET /oauth/authorize (docs/oauth.md): which application asks, where it returns,
 * which workspace it gets (a person of several picks one), and "Allow" / "Deny". The request's
 * parameters ride along as hidden fields, checked again on the POST with the session's CSRF token.
 */
export function consentPage(input: {
  request: AuthorizeRequest;
  email: string;
  workspaces: Workspace[];
  selected: string;
  csrfToken: string;
}): string {
  const { request } = input;
  const name = escapeHtml(request.client.clientName);
  const hidden = Object.entries(request.params)
    .map(([k, v]) => `    <input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
  const only = input.workspaces.length === 1 ? input.workspaces[0] : undefined;
  const workspace = only
    ? `<p>Workspace: <strong>${escapeHtml(only.name)}</strong></p>
    <input type="hidden" name="workspace_id" value="${escapeHtml(only.id)}">`
    : `<label for="workspace_id">Workspace to grant</label>
    <select id="workspace_id" name="workspace_id">
${input.workspaces
  .map((w) => `      <option value="${escapeHtml(w.id)}"${w.id === input.selected ? ' selected' : ''}>${escapeHtml(w.name)}</option>`)
  .join('\n')}
    </select>`;
  return htmlPage(
    `Connect ${request.client.clientName}`,
    `  <h1>Connect ${name} to Workflow Service?</h1>
  <p><strong>${name}</strong> asks to use Workflow Service as you (${escapeHtml(input.email)}) through its MCP tools:</p>
  <ul class="facts">
    <li>read and change the workspace's projects, rows and columns;</li>
    <li>run enrichment tools, which spend the workspace's credits.</li>
  </ul>
  <p>After you decide, you return to ${escapeHtml(destination(request.redirectUri))}.</p>
  <form method="post" action="/oauth/authorize">
${hidden}
    <input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
    ${workspace}
    <div class="buttons">
      <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      <button type="submit" name="decision" value="allow">Allow</button>
    </div>
  </form>
  <p><small>You can remove this connection at any time in Settings → Connected apps.</small></p>`,
  );
}

/** A request that cannot go back to its client: said to the person, never redirected. */
export function authorizeErrorPage(message: string): string {
  return htmlPage(
    'Sign-in stopped',
    `  <h1>This sign-in cannot continue</h1>
  <p class="error" role="alert">${escapeHtml(message)}</p>
  <p>Go back to the application and connect again. If it keeps failing, its settings name the wrong server or address.</p>`,
  );
}
