import { sql } from 'kysely';
import type { ToolRunFigures, ToolStats, ToolStatsRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';

const COUNTERS = ['attempts', 'found', 'credits', 'latency_ms'] as const;

/** Per workspace and tool, running totals of what its runs did; each batch adds to them in one upsert. */
export class SqlToolStatsRepo implements ToolStatsRepo {
  constructor(private readonly database: Database) {}

  async add(workspaceId: string, runs: ToolRunFigures[]): Promise<void> {
    const byTool = new Map<string, ToolRunFigures>();
    for (const r of runs) {
      if (r.attempts === 0) continue;
      const sum = byTool.get(r.toolId) ?? { toolId: r.toolId, attempts: 0, found: 0, credits: 0, latencyMs: 0 };
      byTool.set(r.toolId, {
        toolId: r.toolId,
        attempts: sum.attempts + r.attempts,
        found: sum.found + r.found,
        credits: sum.credits + r.credits,
        latencyMs: sum.latencyMs + r.latencyMs,
      });
    }
    if (byTool.size === 0) return;
    const now = Date.now();
    // Sorted, so two batches of a workspace take the rows' locks in one order (no deadlock).
    const values = [...byTool.values()]
      .sort((a, b) => a.toolId.localeCompare(b.toolId))
      .map((r) => ({
        workspace_id: workspaceId,
        tool_id: r.toolId,
        attempts: r.attempts,
        found: r.found,
        credits: r.credits,
        latency_ms: Math.round(r.latencyMs),
        updated_at: now,
      }));
    const q = this.database.db.insertInto('tool_stats').values(values);
    await this.database.dialect
      .upsert(q, ['workspace_id', 'tool_id'], (inserted) => ({
        ...Object.fromEntries(COUNTERS.map((c) => [c, sql`${sql.ref(c)} + ${inserted(c)}`])),
        updated_at: inserted('updated_at'),
      }))
      .execute();
  }

  async get(workspaceId: string, toolIds: string[]): Promise<Map<string, ToolStats>> {
    const out = new Map<string, ToolStats>();
    if (toolIds.length === 0) return out;
    const rows = await this.database.db
      .selectFrom('tool_stats')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('tool_id', 'in', toolIds)
      .execute();
    for (const r of rows) {
      out.set(r.tool_id, {
        toolId: r.tool_id,
        attempts: Number(r.attempts),
        found: Number(r.found),
        credits: Number(r.credits),
        latencyMs: Number(r.latency_ms),
        updatedAt: Number(r.updated_at),
      });
    }
    return out;
  }
}
