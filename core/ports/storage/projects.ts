import type { BuilderCheckpoint, Column, ExecutionLogEntry, Project, WaterfallStep } from '../../model.ts';
import type { JobsOf } from './job-outbox.ts';

export interface NewColumn {
  name: string;
  type: 'input' | 'tool';
  toolId?: string | null;
  config?: unknown;
  autoRun?: boolean;
  runCondition?: string | null;
  waterfall?: WaterfallStep[] | null;
  maxCreditsPerRow?: number | null;
  stepOrder?: 'listed' | 'auto';
  /** addColumn: the status of existing rows' cells in a tool column (default `pending`). */
  cellStatus?: 'pending' | 'queued';
}

/** What update_column changes in one column, and in the other columns a rename rewrites. */
export interface ColumnUpdate {
  colNo: number;
  /** Fields left undefined stay as they are. */
  name?: string;
  config?: unknown;
  waterfall?: WaterfallStep[] | null;
  autoRun?: boolean;
  runCondition?: string | null;
  /** Other columns whose configs change with it (their `{{Old Name}}` templates renamed). */
  rewritten?: { colNo: number; config: unknown; waterfall: WaterfallStep[] | null }[];
}

/**
 * What updateColumn did: the column as it is now; `moved` when the project's columns were no longer
 * at the version the update was computed from (nothing written: compute it again); `gone` when the
 * column is no longer there.
 */
export type ColumnUpdateOutcome = { column: Column } | 'moved' | 'gone';

export interface ProjectListQuery {
  workspaceId: string;
  limit: number;
  offset: number;
  nameSearch?: string;
}

/** A project to create. */
export interface NewProject {
  /** A chosen public id (e.g. one already named in a credit reservation); generated when absent. */
  id?: string;
  workspaceId: string;
  creatorId: string;
  name: string;
  builderId: string | null;
  formData: unknown;
  columns: NewColumn[];
}

export interface ProjectRepo {
  create(input: NewProject, jobs?: JobsOf<Project>): Promise<Project>;
  /** A live project of this workspace; another workspace's project is `undefined`, like a missing one. */
  get(workspaceId: string, id: string): Promise<Project | undefined>;
  getByPk(pk: number): Promise<Project | undefined>;
  /** The form a project's builder run was created with (kept apart from the project: it can be megabytes). */
  formData(pk: number): Promise<unknown>;
  /** Whether the project is still there (not deleted): a cheap check between a run's pages. */
  isLive(pk: number): Promise<boolean>;
  /** Live projects whose builder run is `queued` or `running` (work to resume after a restart). */
  unfinishedBuilds(): Promise<number[]>;
  list(q: ProjectListQuery): Promise<{ projects: Project[]; total: number }>;
  /** Live projects of a workspace (plan quota). */
  countLive(workspaceId: string): Promise<number>;
  /**
   * A project's columns, in order. Pass the project just read to have them remembered per process
   * while its `columnsVersion` stands; pass its pk to read them now.
   */
  columns(project: Project | number): Promise<Column[]>;
  /** Adds a column (422 when the name is taken); existing rows get its empty cell. */
  addColumn(projectPk: number, column: NewColumn): Promise<Column>;
  /** Deletes a live column (false: none of that number); the project's column caches on every process read it anew. */
  deleteColumn(projectPk: number, colNo: number): Promise<boolean>;
  /**
   * Changes a column, in one transaction with the other columns it rewrites and, on a rename, the
   * unique key's column names (the settings). Written only while the project's columns are still at
   * `columnsVersion` (else `moved`); a name another live column holds is a 409. Advances the version:
   * every process's cached columns of the project are read anew.
   */
  updateColumn(projectPk: number, columnsVersion: number, update: ColumnUpdate): Promise<ColumnUpdateOutcome>;
  /** Renames the project. */
  rename(pk: number, name: string): Promise<void>;
  setSavedFilters(pk: number, filterGroups: unknown[]): Promise<void>;
  /** The project's settings (JSON), when its unique columns stay as they are (else RowRepo.replaceKeys). */
  setSettings(pk: number, settings: string): Promise<void>;
  /** Soft-deletes a project (it answers 404 from then on; rows are purged later). */
  softDelete(pk: number): Promise<void>;
  setBuilderState(pk: number, state: BuilderRunState): Promise<void>;
  /**
   * Starts the builder again (a schedule): the new state and the run's job commit together, unless
   * a run is queued or running (false, nothing changed: runs never overlap) or the project is gone.
   */
  restartBuilder(pk: number, state: BuilderRunState, jobs: JobsOf<boolean>): Promise<boolean>;
}

/** What a builder run records: status, progress, checkpoint and log (any part may be left out). */
export interface BuilderRunState {
  builderStatus: Project['builderStatus'];
  builderError?: string | null;
  builderProgress?: Project['builderProgress'];
  checkpoint?: BuilderCheckpoint | null;
  log?: ExecutionLogEntry[];
  /**
   * A page's write: the checkpoint the run last wrote. The page commits only if the project still
   * holds it (else StaleBuilderRun, nothing written), so two attempts of one run never both write.
   */
  checkpointWas?: BuilderCheckpoint | null;
  /**
   * The run's previous page while it is still being written (a bulk load writes `bulkLanes` pages at
   * once): this page's rows go in beside it, but its state is written only once that page has
   * committed, so checkpoints commit in page order; when that page fails, this one fails with it.
   */
  after?: Promise<unknown>;
}

/** What one step of an enrichment batch did with a tool (self-tuning waterfalls, docs/enrichment.md). */
/** An insert met a unique key another write stored first (nothing was written): read the keys again. */
/**
 * A builder page whose run is no longer the one the project follows (its attempt timed out and a
 * retry took over, which moved the checkpoint): nothing was written; the stale run stops.
 */
export class StaleBuilderRun extends Error {
  override name = 'StaleBuilderRun';
  constructor() {
    super('the builder run moved on without this attempt');
  }
}
