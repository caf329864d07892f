import type { CachedResult, EnrichmentCache } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';

/** Enrichment results by cache key, with an expiry and when they were found; expired entries read as missing. */
export class SqlEnrichmentCache implements EnrichmentCache {
  constructor(private readonly database: Database) {}

  async getMany(keys: string[], fetchedSince?: number): Promise<Map<string, CachedResult>> {
    const out = new Map<string, CachedResult>();
    if (keys.length === 0) return out;
    let q = this.database.db
      .selectFrom('enrichment_cache')
      .select(['cache_key', 'value', 'fetched_at'])
      .where('cache_key', 'in', keys)
      .where('expires_at', '>', Date.now());
    if (fetchedSince !== undefined) q = q.where('fetched_at', '>=', fetchedSince);
    for (const r of await q.execute()) {
      out.set(r.cache_key, { value: JSON.parse(r.value), fetchedAt: r.fetched_at === null ? null : Number(r.fetched_at) });
    }
    return out;
  }

  async putMany(entries: { key: string; value: unknown }[], ttlMs: number, fetched_at: number): Promise<void> {
    if (entries.length === 0) return;
    const expires_at = fetched_at + ttlMs;
    const values = entries.map((e) => ({ cache_key: e.key, value: JSON.stringify(e.value), expires_at, fetched_at }));
    const q = this.database.db.insertInto('enrichment_cache').values(values);
    await this.database.dialect
      .upsert(q, ['cache_key'], (inserted) => ({
        value: inserted('value'),
        expires_at: inserted('expires_at'),
        fetched_at: inserted('fetched_at'),
      }))
      .execute();
  }
}
