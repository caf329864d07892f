import type { McpUrls } from '../../core/identity/oauth/resource-urls.ts';

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** GET / on the MCP host: what a person opening the address in a browser needs to connect a client. */
export function statusPage(urls: McpUrls, toolCount: number, issuer: string): string {
  const mcp = escapeHtml(urls.resource);
  const meta = escapeHtml(urls.metadataUrl);
  const server = escapeHtml(`${issuer}/.well-known/oauth-authorization-server`);
  const entry = escapeHtml(
    JSON.stringify(
      { mcpServers: { workflow: { type: 'http', url: urls.resource, headers: { 'service-api-key': '<API_KEY>' } } } },
      null,
      2,
    ),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Workflow Service MCP</title>
<link rel="icon" href="/favicon.ico">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;color:#1f2937}code,pre{background:#f3f4f6;border-radius:4px;padding:.1rem .3rem}pre{padding:1rem;overflow:auto}.ok{color:#047857}</style>
</head>
<body>
<h1>Workflow Service MCP server</h1>
<p class="ok">Status: running</p>
<ul>
<li>MCP endpoint (streamable HTTP): <code>${mcp}</code></li>
<li>OAuth protected-resource metadata: <a href="${meta}">${meta}</a></li>
<li>OAuth authorization server (browser sign-in): <a href="${server}">${server}</a></li>
<li>Tools: <strong>${toolCount}</strong></li>
<li>Liveness: <a href="/health">/health</a></li>
</ul>
<p>Clients with browser sign-in (Claude, Cursor, the MCP Inspector) need only the endpoint's URL: they open the sign-in page, you choose Allow.</p>
<p>Other clients and programs connect with an API key:</p>
<pre>${entry}</pre>
</body>
</html>
`;
}
