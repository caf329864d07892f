import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import type { Cell } from '../model.ts';
import type { PluginContext } from '../plugins/plugin-types.ts';
import { ProviderError } from '../plugins/provider-http.ts';
import { insertRows } from '../services/row-insert.ts';
import type { Job } from './queue.ts';

/**
 * Runs a project's builder: pages of rows from the plugin are written as they come, with progress
 * in `builder_status.progress`; the run ends `completed` or `failed` with a message a user can act on.
 */
export async function runBuilderJob(kernel: Kernel, job: Job): Promise<void> {
  const { project_pk } = job.payload as { project_pk: number };
  const { projects } = kernel.storage;
  const project = await projects.getByPk(project_pk);
  if (!project || !project.builderId || project.builderStatus !== 'queued') return; // gone, or already handled
  const builder = kernel.plugins.builder(project.builderId);
  if (!builder) {
    await projects.setBuilderState(project.pk, { builderStatus: 'failed', builderError: `builder "${project.builderId}" is no longer installed`, builderProgress: null });
    return;
  }
  const form = project.formData as Record<string, unknown>;
  const target = Math.min(builder.target(form), builder.maxRows);
  let created = 0;
  await projects.setBuilderState(project.pk, { builderStatus: 'running', builderError: null, builderProgress: { rows_created: 0, target } });
  const columns = await projects.columns(project.pk);
  const byName = new Map(columns.map((c) => [c.name, c]));
  const ctx: PluginContext = {
    providerMode: kernel.config.providerMode,
    env: (name) => process.env[name],
    signal: new AbortController().signal,
    log: (message, fields) => log.info(message, { ...fields, job_id: job.id, plugin: builder.id }),
  };
  try {
    for await (const page of builder.run(form, ctx)) {
      const room = builder.maxRows - created;
      if (room <= 0) break;
      const cells = page.slice(0, room).map((row) => {
        const out: Record<number, Cell> = {};
        for (const [name, value] of Object.entries(row)) {
          const col = byName.get(name);
          if (col) out[col.no] = { v: value ?? null };
        }
        return out;
      });
      await insertRows(kernel, project.pk, await projects.columns(project.pk), cells);
      created += cells.length;
      await projects.setBuilderState(project.pk, { builderStatus: 'running', builderError: null, builderProgress: { rows_created: created, target } });
    }
    await projects.setBuilderState(project.pk, { builderStatus: 'completed', builderError: null, builderProgress: null });
    log.info('builder run completed', { job_id: job.id, project_id: project.id, builder: builder.id, rows: created });
  } catch (e) {
    const message = e instanceof ProviderError || e instanceof Error ? e.message : String(e);
    await projects.setBuilderState(project.pk, { builderStatus: 'failed', builderError: message, builderProgress: { rows_created: created, target } });
    log.warn('builder run failed', { job_id: job.id, project_id: project.id, builder: builder.id, error: message });
  }
}
