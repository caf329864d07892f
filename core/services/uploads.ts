import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { ServiceError } from '../errors.ts';
import { log } from '../log.ts';
import { createProjectFromBuilder } from './projects.ts';

/** Characters of a file's start kept for its builder's columns and estimate (its header, and a sample of rows). */
export const UPLOAD_HEAD_CHARS = 65_536;
/** Characters per stored part: large enough for few statements, small enough for any database's packet. */
const PART_CHARS = 1_048_576;
/** Uploads that no project imports are deleted after a day. */
export const UNUSED_UPLOAD_MS = 24 * 3600_000;

/**
 * Stores a file as it streams in — decoded as UTF-8 (a character split between two reads is
 * kept whole), in parts of about a megabyte — so that memory stays flat whatever its size. Past
 * `maxBytes` the upload stops with a 413 and what was stored is deleted.
 */
export async function storeUpload(
  kernel: Kernel,
  workspace: Workspace,
  name: string,
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<{ id: string; bytes: number }> {
  const id = newId();
  const uploads = kernel.storage.uploads;
  await uploads.create({ id, workspaceId: workspace.id, name: name.slice(0, 255), createdAt: Date.now() });
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let bytes = 0;
  let parts = 0;
  let head = '';
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
  try {
    for await (const chunk of body) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) {
        throw new ServiceError('payload_too_large', `The file is larger than ${maxBytes} bytes (MAX_UPLOAD_BYTES); split it`);
      }
      const text = decoder.decode(chunk, { stream: true });
      if (head.length < UPLOAD_HEAD_CHARS) head += text.slice(0, UPLOAD_HEAD_CHARS - head.length);
      pending += text;
      await flush(false);
    }
    pending += decoder.decode();
    if (head.length < UPLOAD_HEAD_CHARS) head = (head + pending).slice(0, UPLOAD_HEAD_CHARS);
    await flush(true);
    if (bytes === 0)
      throw new ServiceError('validation_error', 'The file is empty: send the CSV as the request body (or a multipart "file" part)');
    await uploads.complete(id, { bytes, parts, head });
    return { id, bytes };
  } catch (e) {
    await uploads.remove(id).catch(() => undefined);
    throw e;
  }
}

/**
 * POST /projects/import.csv: the file is stored, then a project is made from it by
 * csv_import_builder (or another builder that takes uploads), as POST /projects would with the CSV
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
  const upload = await storeUpload(kernel, workspace, input.fileName, input.body, kernel.config.maxUploadBytes);
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

/** Deletes uploads no live project imports, a day after they came (hourly, in processes that run jobs). */
export async function pruneUploads(kernel: Kernel): Promise<void> {
  try {
    const n = await kernel.storage.uploads.pruneUnused(Date.now() - UNUSED_UPLOAD_MS);
    if (n) log.info('unused uploads deleted', { uploads: n });
  } catch (e) {
    log.warn('unused uploads could not be deleted', { error: (e as Error).message });
  }
}
