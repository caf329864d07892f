/**
 * Where the service finds Redis (docs/configuration.md): one server (REDIS_URL), or the primary a
 * group of Redis Sentinels names (REDIS_SENTINELS + REDIS_SENTINEL_NAME), followed through failovers.
 */

/** A primary found through Sentinel: the sentinels to ask, the name they watch it under, the credentials. */
export interface RedisSentinels {
  sentinels: { host: string; port: number }[];
  /** The primary's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  name: string;
  /** The primary's and replicas' credentials (REDIS_USERNAME for an ACL user, REDIS_PASSWORD). */
  username?: string;
  password?: string;
  /** The sentinels' own password (their `requirepass`), REDIS_SENTINEL_PASSWORD. */
  sentinelPassword?: string;
}

/** A server's URL (`redis://[:password@]host:port[/db]`, `rediss://` for TLS), or a primary found through Sentinel. */
export type RedisTarget = string | RedisSentinels;

type Env = Record<string, string | undefined>;

const EXAMPLE = '10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379';

/** `host:port` or `[ipv6]:port`. */
function sentinelAddress(item: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(item);
  const port = Number(m?.[3]);
  if (!m || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`REDIS_SENTINELS must be a comma list of host:port (e.g. ${EXAMPLE}); "${item}" is not one`);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

/**
 * REDIS_URL, or REDIS_SENTINELS with REDIS_SENTINEL_NAME (and REDIS_USERNAME, REDIS_PASSWORD,
 * REDIS_SENTINEL_PASSWORD); undefined when neither is set (jobs run in this process). Throws on
 * a value that cannot work, naming the variable.
 */
export function redisTarget(env: Env): RedisTarget | undefined {
  const url = env.REDIS_URL || undefined;
  const list = env.REDIS_SENTINELS?.trim() || undefined;
  const name = env.REDIS_SENTINEL_NAME?.trim() || undefined;
  const sentinelOnly = ['REDIS_SENTINEL_NAME', 'REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD'].filter((n) => env[n]);
  if (!list) {
    if (sentinelOnly.length) {
      throw new Error(
        `${sentinelOnly.join(', ')} ${sentinelOnly.length > 1 ? 'apply' : 'applies'} to Sentinel mode only: set REDIS_SENTINELS too` +
          (url ? ', or put the password in REDIS_URL (redis://:password@host:port)' : ''),
      );
    }
    return url;
  }
  if (url) throw new Error('set REDIS_URL (one Redis server) or REDIS_SENTINELS (a primary found through Sentinel), not both');
  if (!name) {
    throw new Error(
      'REDIS_SENTINEL_NAME is needed with REDIS_SENTINELS: the name the sentinels watch the primary under (sentinel monitor <name> …)',
    );
  }
  const sentinels = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(sentinelAddress);
  return {
    sentinels,
    name,
    ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
    ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
  };
}
