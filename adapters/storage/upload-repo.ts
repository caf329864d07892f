import type { UploadRecord, UploadRepo } from '../../core/ports/storage.ts';
import { breathe } from '../../core/jobs/breathe.ts';
import type { Database } from './database.ts';
import type { UploadTable } from './tables.ts';

const recordOf = (r: UploadTable): UploadRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  bytes: Number(r.bytes),
  parts: Number(r.parts),
  head: r.head,
  createdAt: Number(r.created_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  projectId: r.project_id,
});

/** Uploaded files in text parts: written as they stream in, read back a part at a time. */
export class SqlUploadRepo implements UploadRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(u: Omit<UploadRecord, 'bytes' | 'parts' | 'head' | 'completedAt' | 'projectId'>): Promise<void> {
    await this.db
      .insertInto('uploads')
      .values({
        id: u.id,
        workspace_id: u.workspaceId,
        name: u.name,
        bytes: 0,
        parts: 0,
        head: '',
        created_at: u.createdAt,
        completed_at: null,
        project_id: null,
      })
      .execute();
  }

  async addPart(uploadId: string, partNo: number, text: string): Promise<void> {
    await this.db.insertInto('upload_parts').values({ upload_id: uploadId, part_no: partNo, text }).execute();
  }

  async complete(uploadId: string, totals: { bytes: number; parts: number; head: string }): Promise<void> {
    await this.db
      .updateTable('uploads')
      .set({ bytes: totals.bytes, parts: totals.parts, head: totals.head, completed_at: Date.now() })
      .where('id', '=', uploadId)
      .execute();
  }

  async get(workspaceId: string, id: string): Promise<UploadRecord | undefined> {
    const r = await this.db
      .selectFrom('uploads')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && recordOf(r);
  }

  async attach(uploadId: string, projectId: string): Promise<boolean> {
    const r = await this.db
      .updateTable('uploads')
      .set({ project_id: projectId })
      .where('id', '=', uploadId)
      .where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', '=', projectId)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async *read(uploadId: string): AsyncIterable<string> {
    const upload = await this.db.selectFrom('uploads').select('parts').where('id', '=', uploadId).executeTakeFirst();
    const parts = Number(upload?.parts ?? 0);
    for (let partNo = 0; partNo < parts; partNo++) {
      const r = await this.db
        .selectFrom('upload_parts')
        .select('text')
        .where('upload_id', '=', uploadId)
        .where('part_no', '=', partNo)
        .executeTakeFirst();
      // Never a short file taken for a whole one: a missing part (the upload deleted meanwhile) fails the run.
      if (!r) throw new Error(`the uploaded file is incomplete: part ${partNo + 1} of ${parts} is missing (deleted meanwhile?)`);
      yield r.text;
    }
  }

  async remove(uploadId: string): Promise<void> {
    // Parts first, 8 (≈ 8–32 MB) at a time: a large upload's parts go in short statements, others' writes between them.
    const last = await this.db
      .selectFrom('upload_parts')
      .select((eb) => eb.fn.max('part_no').as('n'))
      .where('upload_id', '=', uploadId)
      .executeTakeFirst();
    for (let from = 0; from <= Number(last?.n ?? -1); from += 8) {
      await this.db
        .deleteFrom('upload_parts')
        .where('upload_id', '=', uploadId)
        .where('part_no', '>=', from)
        .where('part_no', '<', from + 8)
        .execute();
      await breathe();
    }
    await this.db.deleteFrom('uploads').where('id', '=', uploadId).execute();
  }

  async pruneUnused(before: number): Promise<number> {
    const stale = await this.db
      .selectFrom('uploads as u')
      .leftJoin('projects as p', 'p.id', 'u.project_id')
      .select('u.id')
      .where('u.created_at', '<', before)
      // Never imported, its project deleted, or its run over (one whose own clean-up did not happen).
      .where((eb) =>
        eb.or([
          eb('u.project_id', 'is', null),
          eb('p.pk', 'is', null),
          eb('p.deleted_at', 'is not', null),
          eb('p.builder_status', 'not in', ['queued', 'running']),
        ]),
      )
      .limit(100)
      .execute();
    for (const { id } of stale) await this.remove(id);
    return stale.length;
  }
}
