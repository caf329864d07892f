/** Results of paid lookups by the tool's cache key (a cached result costs nothing). */
/** A result kept for reuse, and when it was found. */
export interface CachedResult {
  value: unknown;
  /** ms; null for entries older than this field. */
  fetchedAt: number | null;
}

export interface EnrichmentCache {
  /** Entries not expired and found at or after `fetchedSince` (ms) when given. */
  getMany(keys: string[], fetchedSince?: number): Promise<Map<string, CachedResult>>;
  /** `fetchedAt` (ms): when the results were found, as their cells' provenance says. */
  putMany(entries: { key: string; value: unknown }[], ttlMs: number, fetchedAt: number): Promise<void>;
}
