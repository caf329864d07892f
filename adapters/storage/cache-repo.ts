import type { EnrichmentCache } from '../../core/storage.ts';
import type { Database } from './database.ts';

/** Enrichment results by cache key, with an expiry; expired entries read as missing. */
export class SqlEnrichmentCache implements EnrichmentCache {
  constructor(private readonly database: Database) {}

  async getMany(keys: string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    if (keys.length === 0) return out;
    const rows = await this.database.db
      .selectFrom('enrichment_cache')
      .select(['cache_key', 'value'])
      .where('cache_key', 'in', keys)
      .where('expires_at', '>', Date.now())
      .execute();
    for (const r of rows) out.set(r.cache_key, JSON.parse(r.value));
    return out;
  }

  async putMany(entries: { key: string; value: unknown }[], ttlMs: number): Promise<void> {
    if (entries.length === 0) return;
    const expires_at = Date.now() + ttlMs;
    const values = entries.map((e) => ({ cache_key: e.key, value: JSON.stringify(e.value), expires_at }));
    const q = this.database.db.insertInto('enrichment_cache').values(values);
    await this.database.dialect
      .upsert(q, ['cache_key'], (inserted) => ({ value: inserted('value'), expires_at: inserted('expires_at') }))
      .execute();
  }
}
