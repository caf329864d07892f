/** A project's schedule (docs/enrichment.md): when its builder runs again. */
export interface ScheduleRecord {
  projectPk: number;
  cron: string;
  timezone: string;
  nextRunAt: number;
  lastRunAt: number | null;
  /** What the last due time did: a run started, or why none did. */
  lastOutcome: string | null;
  /** The API key that set it (null: a console session): its runs spend under that key's monthly cap. */
  keyId: string | null;
  createdAt: number;
}

export interface ScheduleRepo {
  get(projectPk: number): Promise<ScheduleRecord | undefined>;
  /** Sets (or replaces) a project's schedule. */
  put(schedule: Omit<ScheduleRecord, 'lastRunAt' | 'lastOutcome'>): Promise<void>;
  /** False: the project had none. */
  remove(projectPk: number): Promise<boolean>;
  /** Schedules due at `now`, oldest first. */
  due(now: number, limit: number): Promise<ScheduleRecord[]>;
  /**
   * Takes a due time: moves the schedule from `dueAt` to `nextRunAt` in one statement, and answers
   * whether this call did (of two processes taking one due time, one does).
   */
  take(projectPk: number, dueAt: number, nextRunAt: number): Promise<boolean>;
  /** Records what a due time did. */
  recordOutcome(projectPk: number, at: number, outcome: string): Promise<void>;
}
