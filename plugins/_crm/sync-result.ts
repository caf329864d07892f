import { type EnrichResult, ProviderError, rowFailure } from 'workflow-service/plugin-sdk';

/** What a sync cell holds: the CRM record, a link to it, and whether this run made it. */
export interface SyncValue {
  id: string;
  url: string;
  action: 'created' | 'updated';
}

/** The `produces` of a sync tool; `url` first, as the field its cells show and exports write. */
export const SYNC_PRODUCES = [
  { field: 'url', description: 'Link to the record in the CRM.' },
  { field: 'id', description: 'The CRM record id.' },
  { field: 'action', description: '"created" when this run made the record, "updated" when it was there.' },
];

/**
 * The CRM refused the column's config (a mapped field it does not know, a read-only field, an
 * external ID field that does not exist): the same for every row, so thrown to fail the batch with
 * the CRM's message rather than repeating it per row. Permanent.
 */
export class ConfigRefused extends ProviderError {
  constructor(message: string, status: number) {
    super(message, status, false);
    this.name = 'ConfigRefused';
  }
}

/** A row's own failure becomes its result; what concerns every row (auth, throttle, outage, config) is thrown again. */
export function syncFailure(e: unknown): EnrichResult {
  if (e instanceof ConfigRefused) throw e;
  return rowFailure(e);
}
