import type { ScheduleRecord, ScheduleRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { ScheduleTable } from './tables.ts';

const recordOf = (r: ScheduleTable): ScheduleRecord => ({
  projectPk: Number(r.project_pk),
  cron: r.cron,
  timezone: r.timezone,
  nextRunAt: Number(r.next_run_at),
  lastRunAt: r.last_run_at === null ? null : Number(r.last_run_at),
  lastOutcome: r.last_outcome,
  keyId: r.key_id,
  createdAt: Number(r.created_at),
});

/** Projects' schedules; the due time is taken by a compare-and-set on `next_run_at`. */
export class SqlScheduleRepo implements ScheduleRepo {
  constructor(private readonly database: Database) {}

  async get(projectPk: number): Promise<ScheduleRecord | undefined> {
    const r = await this.database.db.selectFrom('schedules').selectAll().where('project_pk', '=', projectPk).executeTakeFirst();
    return r && recordOf(r);
  }

  async put(s: Omit<ScheduleRecord, 'lastRunAt' | 'lastOutcome'>): Promise<void> {
    const q = this.database.db.insertInto('schedules').values({
      project_pk: s.projectPk,
      cron: s.cron,
      timezone: s.timezone,
      next_run_at: s.nextRunAt,
      last_run_at: null,
      last_outcome: null,
      key_id: s.keyId,
      created_at: s.createdAt,
    });
    await this.database.dialect
      .upsert(q, ['project_pk'], (inserted) => ({
        cron: inserted('cron'),
        timezone: inserted('timezone'),
        next_run_at: inserted('next_run_at'),
        key_id: inserted('key_id'),
      }))
      .execute();
  }

  async remove(projectPk: number): Promise<boolean> {
    const r = await this.database.db.deleteFrom('schedules').where('project_pk', '=', projectPk).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async due(now: number, limit: number): Promise<ScheduleRecord[]> {
    const rows = await this.database.db
      .selectFrom('schedules')
      .selectAll()
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    return rows.map(recordOf);
  }

  async take(projectPk: number, dueAt: number, nextRunAt: number): Promise<boolean> {
    const r = await this.database.db
      .updateTable('schedules')
      .set({ next_run_at: nextRunAt })
      .where('project_pk', '=', projectPk)
      .where('next_run_at', '=', dueAt)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async recordOutcome(projectPk: number, at: number, outcome: string): Promise<void> {
    await this.database.db
      .updateTable('schedules')
      .set({ last_run_at: at, last_outcome: outcome.slice(0, 255) })
      .where('project_pk', '=', projectPk)
      .execute();
  }
}
