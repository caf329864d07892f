import { v7 as uuidv7 } from 'uuid';

/** Public ids are UUID v7: unique across processes and roughly time-ordered for index locality. */
export const newId = (): string => uuidv7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
