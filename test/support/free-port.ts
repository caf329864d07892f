/** A TCP port that was free on loopback a moment ago (for servers that the tests start). */
export function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = server.port as number;
  server.stop(true);
  return port;
}
