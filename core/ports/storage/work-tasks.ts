/**
 * Long work handed to a caller as a task (MCP Tasks): a builder run, or a run of tool columns, of
 * one project. Where it stands is read from the project; the record says whose it is, what it
 * covers, whether it was cancelled and until when it is kept.
 */
export interface WorkTask {
  id: string;
  workspaceId: string;
  projectPk: number;
  kind: 'builder' | 'columns';
  /** A column run's columns (undefined: every tool column of the project). */
  colIds?: string[];
  /** Cells a column run queued; rows a builder run aims at. */
  total: number;
  cancelledAt: number | null;
  createdAt: number;
  expiresAt: number;
}

export interface WorkTaskRepo {
  create(task: Omit<WorkTask, 'cancelledAt'>): Promise<void>;
  /** The workspace's task, unless it expired (another workspace's id is not found). */
  get(workspaceId: string, id: string, now?: number): Promise<WorkTask | undefined>;
  markCancelled(id: string, at: number): Promise<void>;
  /** Forgets tasks expired before `now`; answers how many. */
  prune(now: number): Promise<number>;
}
