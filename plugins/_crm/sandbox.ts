import { seededRandom } from 'workflow-service/plugin-sdk';
import type { SyncValue } from './sync-result.ts';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn from `alphabet`, the same for the same seed. */
export function seededChars(seed: string, length: number, alphabet = ALPHANUMERIC): string {
  const rand = seededRandom(seed);
  return Array.from({ length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
}

/** Keys synced in sandbox mode by this process, so a re-run answers "updated" as the CRM would. Bounded. */
const seen = new Set<string>();
const MAX_SEEN = 50_000;

/**
 * Sandbox twin of a sync: no request; the record id and URL come from the key (the same key, the
 * same record, as the live upsert promises), the URL under example.com.
 */
export function sandboxSync(seed: string, record: (seed: string) => { id: string; url: string }): SyncValue {
  const action = seen.has(seed) ? 'updated' : 'created';
  if (seen.size >= MAX_SEEN) seen.clear();
  seen.add(seed);
  return { ...record(seed), action };
}
