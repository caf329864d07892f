/**
 * `mysql://user:pass@h1:3306,h2:3306,h3:3306/db?opts` (the nodes of a Galera cluster) as one URL
 * per host, in the order written; a URL of one host is answered as it is. mysql2 opens one host
 * per pool, and WHATWG URLs hold a single host.
 */
export function splitHosts(url: string): string[] {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i.exec(url);
  if (!m) return [url];
  const [, scheme, auth, hosts = '', rest] = m;
  const names = hosts
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  if (names.length <= 1) return [url];
  return names.map((host) => `${scheme}${auth === undefined ? '' : `${auth}@`}${host}${rest}`);
}
