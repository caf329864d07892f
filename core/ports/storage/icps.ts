import type { IcpDefinition } from '../../icp/definition.ts';
import type { ScoreTally } from '../../icp/score-tally.ts';
import type { JobsOf } from './job-outbox.ts';

/** A workspace's named Ideal Customer Profile. */
export interface IcpRecord {
  id: string;
  workspaceId: string;
  name: string;
  definition: IcpDefinition;
  createdAt: number;
  updatedAt: number;
}

/** ICPs, always scoped to a workspace: another workspace's id reads as missing. */
export interface IcpRepo {
  create(input: { workspaceId: string; name: string; definition: IcpDefinition }): Promise<IcpRecord>;
  get(workspaceId: string, id: string): Promise<IcpRecord | undefined>;
  /** Oldest first. */
  list(workspaceId: string): Promise<IcpRecord[]>;
  /** The updated ICP, or undefined when it is not one of this workspace's. */
  update(workspaceId: string, id: string, patch: { name?: string; definition?: IcpDefinition }): Promise<IcpRecord | undefined>;
  delete(workspaceId: string, id: string): Promise<boolean>;
}

export type IcpScoreRunStatus = 'queued' | 'running' | 'completed' | 'failed';

/** A score_icp run over a project: what it scores, where it stands, what it found so far. */
export interface IcpScoreRunRecord {
  id: string;
  workspaceId: string;
  icpId: string;
  projectPk: number;
  projectId: string;
  /** The tool column that receives the scores, if any. */
  colNo: number | null;
  /** The ICP's definition when the run was asked for (editing the ICP mid-run changes nothing). */
  definition: IcpDefinition;
  status: IcpScoreRunStatus;
  /** Live rows when the run was asked for. */
  rowsTotal: number;
  rowsDone: number;
  /** Checkpoint: the last row scored (0 before the first). */
  afterSeq: number;
  tally: ScoreTally;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Score runs; reads by the caller are scoped to the workspace, the job reads by id. */
export interface IcpScoreRunRepo {
  create(run: Omit<IcpScoreRunRecord, 'createdAt' | 'updatedAt'>, jobs?: JobsOf<IcpScoreRunRecord>): Promise<IcpScoreRunRecord>;
  get(workspaceId: string, id: string): Promise<IcpScoreRunRecord | undefined>;
  getById(id: string): Promise<IcpScoreRunRecord | undefined>;
  /** Ids of runs still `queued` or `running` (work to resume after a restart). */
  unfinished(): Promise<string[]>;
  update(id: string, patch: Partial<Pick<IcpScoreRunRecord, 'status' | 'rowsDone' | 'afterSeq' | 'tally' | 'error'>>): Promise<void>;
}
