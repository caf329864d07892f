/**
 * The frame of the pages served without the console's bundle (sign-in, OAuth consent and its
 * errors): plain HTML with its styles inline, working without JavaScript.
 */

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { display: grid; place-items: center; min-height: 100vh; margin: 0; background: Canvas; color: CanvasText; }
  main { width: min(26rem, 90vw); }
  h1 { font-size: 1.4rem; margin: 0 0 1.5rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
  input, select { box-sizing: border-box; width: 100%; padding: .55rem .6rem; font: inherit; border: 1px solid GrayText; border-radius: 6px; }
  button { margin-top: 1.5rem; width: 100%; padding: .6rem; font: inherit; font-weight: 600; border: 0; border-radius: 6px; background: #2457d6; color: #fff; cursor: pointer; }
  button.secondary { background: transparent; color: inherit; border: 1px solid GrayText; }
  .buttons { display: flex; gap: .75rem; }
  .buttons button { flex: 1; }
  button:focus-visible, input:focus-visible, select:focus-visible, a:focus-visible { outline: 3px solid #8fb0ff; outline-offset: 1px; }
  .error { color: #b3261e; background: #fde7e4; padding: .6rem .75rem; border-radius: 6px; }
  .facts { margin: 1rem 0; padding-left: 1.2rem; line-height: 1.6; }
  code { font-size: .95em; word-break: break-all; }
  @media (prefers-color-scheme: dark) { .error { color: #ffb4ab; background: #5c1a14; } }
`;

export const htmlPage = (title: string, main: string) => `<!doctype html>
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
