import { escapeHtml, htmlPage } from './html-page.ts';

/**
 * The sign-in page (GET /login): plain HTML with its styles inline, so it works without the
 * console's bundle and without JavaScript. Inputs `email` and `password`, a "Sign in" button (docs/console.md).
 */

export function loginPage(options: { error?: string; email?: string; next?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="login-error">${escapeHtml(options.error)}</p>` : '';
  const described = options.error ? ' aria-describedby="login-error"' : '';
  return htmlPage(
    'Sign in',
    `  <h1>Sign in to Workflow Service</h1>
  ${error}
  <form method="post" action="/login">
    <input type="hidden" name="next" value="${escapeHtml(options.next ?? '/')}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}"${described}>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${described}>
    <button type="submit">Sign in</button>
  </form>`,
  );
}
