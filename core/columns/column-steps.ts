import type { Column, WaterfallStep } from '../model.ts';
import { referencedColumns } from './templates.ts';

/**
 * The tools a tool column runs, in order: its waterfall steps, or the one tool with its config.
 * The one place that decides "waterfall or single tool".
 */
export function columnSteps(column: Pick<Column, 'waterfall' | 'toolId' | 'config'>): WaterfallStep[] {
  return column.waterfall ?? [{ tool_id: column.toolId ?? '', config: (column.config ?? {}) as Record<string, unknown> }];
}

/** Column names any step's config reads through `{{Column}}` templates. */
export function columnsReadBy(column: Pick<Column, 'waterfall' | 'toolId' | 'config'>): Set<string> {
  const names = new Set<string>();
  for (const step of columnSteps(column)) referencedColumns(step.config, names);
  return names;
}
