/**
 * A TCP port that was free on loopback a moment ago (for servers that the tests start), taken below
 * Linux's ephemeral range (32768 and up by default). A server binds its port seconds after this
 * answers (a service process starting, a Galera node after its state transfer): a port the kernel
 * handed out as ephemeral may by then be the local end of some outgoing connection of the tests, and
 * the server would fail to listen, or another test's server answer in its place.
 */
export function freePort(): number {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response() }).stop(true);
      return port;
    } catch {}
  }
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = server.port as number;
  server.stop(true);
  return port;
}
