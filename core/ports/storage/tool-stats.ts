export interface ToolRunFigures {
  toolId: string;
  /** Rows the tool ran on and settled (found, nothing found, or failed for good). */
  attempts: number;
  found: number;
  /** Net of refunds. */
  credits: number;
  latencyMs: number;
}

/** A workspace's running figures for one tool. */
export interface ToolStats extends ToolRunFigures {
  updatedAt: number;
}

export interface ToolStatsRepo {
  /** Adds each run's figures to its tool's totals (one upsert per tool). */
  add(workspaceId: string, runs: ToolRunFigures[]): Promise<void>;
  /** The workspace's totals for these tools (tools never run are absent). */
  get(workspaceId: string, toolIds: string[]): Promise<Map<string, ToolStats>>;
}
