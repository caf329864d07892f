/** An uploaded file (a CSV), stored in text parts as it streamed in. */
export interface UploadRecord {
  id: string;
  workspaceId: string;
  /** The file name, as sent (or the project's name). */
  name: string;
  bytes: number;
  parts: number;
  /** The file's first characters (its header). */
  head: string;
  createdAt: number;
  /** Set once every part is stored; an upload never completed is not imported. */
  completedAt: number | null;
  /** The project importing it (its id, named before the project is made). */
  projectId: string | null;
}

export interface UploadRepo {
  create(upload: Omit<UploadRecord, 'bytes' | 'parts' | 'head' | 'completedAt' | 'projectId'>): Promise<void>;
  addPart(uploadId: string, partNo: number, text: string): Promise<void>;
  complete(uploadId: string, totals: { bytes: number; parts: number; head: string }): Promise<void>;
  get(workspaceId: string, id: string): Promise<UploadRecord | undefined>;
  /** Names the project that imports the upload (false: it is another project's already). */
  attach(uploadId: string, projectId: string): Promise<boolean>;
  /** The parts' text, in order, read one at a time. */
  read(uploadId: string): AsyncIterable<string>;
  /** Deletes an upload and its parts. */
  remove(uploadId: string): Promise<void>;
  /** Deletes uploads created before `before` that no run reads any more (never imported, project deleted, run over); answers how many (at most 100 a call). */
  pruneUnused(before: number): Promise<number>;
}
