import { newId } from '../ids.ts';
import { columnNameProblems } from '../columns/column-names.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { type FieldError, ServiceError, validationError } from '../errors.ts';
import { log } from '../log.ts';
import { createProjectFromBuilder } from './projects.ts';
import { checkProjectQuota } from './quotas.ts';

/** Characters of a file's start kept for its builder's columns and estimate (its header, and a sample of rows). */
export const UPLOAD_HEAD_CHARS = 65_536;
/** Characters per stored part: large enough for few statements, small enough for any database's packet. */
const PART_CHARS = 1_048_576;
/** Uploads that no project imports are deleted after a day. */
const UNUSED_UPLOAD_MS = 24 * 3600_000;

/**
 * Stores a file as it streams in — decoded as UTF-8 (a character split between two reads is kept
 * whole; bytes that are not UTF-8 are a 422), in parts of about a megabyte — so that memory stays
 * flat whatever its size. `checkHead` sees the file's start as soon as it holds the first line (or
 * the whole file), so a file its builder refuses stops there. Past `maxBytes` the upload stops
 * with a 413. Whatever stops it, what was stored is deleted.
 */
export async function storeUpload(
  kernel: Kernel,
  workspace: Workspace,
  name: string,
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  checkHead: (head: string, bytesSoFar: number) => void = () => {},
): Promise<{ id: string; bytes: number }> {
  const id = newId();
  const uploads = kernel.storage.uploads;
  await uploads.create({ id, workspaceId: workspace.id, name: name.slice(0, 255), createdAt: Date.now() });
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
  let bytes = 0;
  let parts = 0;
  let head = '';
  let headChecked = false;
  let pending = '';
  const flush = async (all: boolean) => {
    while (pending.length >= PART_CHARS || (all && pending.length > 0)) {
      let cut = Math.min(PART_CHARS, pending.length);
      const last = pending.charCodeAt(cut - 1);
      if (cut < pending.length && last >= 0xd800 && last <= 0xdbff) cut++; // never split a surrogate pair
      await uploads.addPart(id, parts++, pending.slice(0, cut));
      pending = pending.slice(cut);
    }
  };
  const take = (text: string) => {
    if (head.length < UPLOAD_HEAD_CHARS) head += text.slice(0, UPLOAD_HEAD_CHARS - head.length);
    pending += text;
    // The first line is enough unless it holds a quote (a quoted header may span lines): then the whole start.
    const firstLine = /^[^\r\n]*[\r\n]/.exec(head)?.[0];
    if (!headChecked && ((firstLine !== undefined && !firstLine.includes('"')) || head.length >= UPLOAD_HEAD_CHARS)) {
      if (firstLine === undefined) {
        throw validationError(
          `The file's first line is longer than ${UPLOAD_HEAD_CHARS.toLocaleString('en-US')} characters: is it a CSV?`,
          [{ path: 'file', message: 'first line too long' }],
        );
      }
      headChecked = true;
      checkHead(head, bytes);
    }
  };
  const decode = (chunk?: Uint8Array) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw validationError(`The file is not UTF-8 (near byte ${bytes.toLocaleString('en-US')}): save it as CSV UTF-8 and send it again`, [
        { path: 'file', message: 'is not UTF-8' },
      ]);
    }
  };
  try {
    for await (const chunk of body) {
      if (bytes === 0 && chunk.byteLength >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff))) {
        throw validationError('The file is UTF-16 ("Unicode text"): save it as CSV UTF-8 and send it again', [
          { path: 'file', message: 'is UTF-16' },
        ]);
      }
      bytes += chunk.byteLength;
      if (bytes > maxBytes) {
        throw new ServiceError('payload_too_large', `The file is larger than ${maxBytes} bytes (MAX_UPLOAD_BYTES); split it`);
      }
      take(decode(chunk));
      await flush(false);
    }
    take(decode());
    if (bytes === 0) throw validationError('The file is empty: send the CSV as the request body (or a multipart "file" part)', []);
    if (!headChecked) checkHead(head, bytes);
    await flush(true);
    await uploads.complete(id, { bytes, parts, head });
    return { id, bytes };
  } catch (e) {
    await uploads.remove(id).catch(() => undefined);
    throw e;
  }
}

/**
 * POST /projects/import.csv: the file is stored, then a project is made from it by
 * the builder that takes the file (a CSV import), as POST /projects would with the CSV
 * as text — same checks, credits and answer. A file the builder refuses (no header…) is deleted.
 */
export async function importUpload(
  kernel: Kernel,
  workspace: Workspace,
  input: { name: string | undefined; fileName: string; builderId: string; body: AsyncIterable<Uint8Array> },
  keyId?: string,
) {
  const builder = kernel.plugins.builder(input.builderId);
  if (!builder?.uploads) {
    const takers = kernel.plugins
      .listBuilders()
      .filter((b) => b.uploads)
      .map((b) => b.id);
    throw new ServiceError('validation_error', `builder_id "${input.builderId}" takes no file; use one of: ${takers.join(', ')}`);
  }
  // What would refuse the project refuses the upload before the file is stored: the project quota,
  // then the file's header as soon as it has come.
  await checkProjectQuota(kernel, workspace);
  const fileName = input.fileName;
  const upload = await storeUpload(kernel, workspace, fileName, input.body, kernel.config.maxUploadBytes, (head, bytes) => {
    const problems = columnNameProblems(builder.columns({ upload_id: 'checking' }, { name: fileName, bytes, head }), 0, 'file');
    if (problems.length) throw validationError(`The file's header cannot make columns: ${(problems[0] as FieldError).message}`, problems);
  });
  try {
    const made = await createProjectFromBuilder(
      kernel,
      workspace,
      { builder_id: builder.id, form_data: { upload_id: upload.id }, ...(input.name ? { name: input.name } : {}) },
      keyId,
    );
    return { ...made, upload_id: upload.id, bytes: upload.bytes };
  } catch (e) {
    await kernel.storage.uploads.remove(upload.id).catch(() => undefined);
    throw e;
  }
}

/** Deletes uploads no run reads any more, a day after they came (at start, then hourly, in processes that run jobs). */
export async function pruneUploads(kernel: Kernel): Promise<void> {
  try {
    let n = 0;
    for (let pass = 0; pass < 100; pass++) {
      const deleted = await kernel.storage.uploads.pruneUnused(Date.now() - UNUSED_UPLOAD_MS);
      n += deleted;
      if (deleted === 0) break;
    }
    if (n) log.info('unused uploads deleted', { uploads: n });
  } catch (e) {
    log.warn('unused uploads could not be deleted', { error: (e as Error).message });
  }
}
