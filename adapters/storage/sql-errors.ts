/** A unique key refused the insert (MySQL ER_DUP_ENTRY, SQLite UNIQUE constraint): the record exists. */
export function isDuplicateKey(e: unknown): boolean {
  const err = e as { code?: string; errno?: number; message?: string };
  return err?.code === 'ER_DUP_ENTRY' || err?.errno === 1062 || /UNIQUE constraint failed/i.test(String(err?.message));
}
