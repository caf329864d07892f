/**
 * The sign-in page (GET /login): plain HTML with its styles inline, so it works without the
 * console's bundle and without JavaScript. Inputs `email` and `password`, a "Sign in" button (DESIGN §9).
 */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { display: grid; place-items: center; min-height: 100vh; margin: 0; background: Canvas; color: CanvasText; }
  main { width: min(22rem, 90vw); }
  h1 { font-size: 1.4rem; margin: 0 0 1.5rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
  input { box-sizing: border-box; width: 100%; padding: .55rem .6rem; font: inherit; border: 1px solid GrayText; border-radius: 6px; }
  button { margin-top: 1.5rem; width: 100%; padding: .6rem; font: inherit; font-weight: 600; border: 0; border-radius: 6px; background: #2457d6; color: #fff; cursor: pointer; }
  button:focus-visible, input:focus-visible, a:focus-visible { outline: 3px solid #8fb0ff; outline-offset: 1px; }
  .error { color: #b3261e; background: #fde7e4; padding: .6rem .75rem; border-radius: 6px; }
  @media (prefers-color-scheme: dark) { .error { color: #ffb4ab; background: #5c1a14; } }
`;

const page = (title: string, main: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Workflow Service</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${main}
</main>
</body>
</html>`;

export function loginPage(options: { error?: string; email?: string; next?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="login-error">${escapeHtml(options.error)}</p>` : '';
  const described = options.error ? ' aria-describedby="login-error"' : '';
  return page(
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
