/** What claiming an idempotency key found. */
export type IdempotencyClaim =
  | { state: 'claimed' }
  | { state: 'done'; status: number; response: unknown }
  | { state: 'busy' }
  | { state: 'mismatch' };

/** Stored answers of requests sent with an idempotency key (24 h). */
export interface IdempotencyRepo {
  /** Claims the key for this request, or tells what an earlier request with it left. */
  claim(workspaceId: string, key: string, operation: string, requestHash: string): Promise<IdempotencyClaim>;
  complete(workspaceId: string, key: string, status: number, response: unknown): Promise<void>;
  /** Forgets a claim whose request failed unexpectedly, so that a retry runs it again. */
  release(workspaceId: string, key: string): Promise<void>;
}
