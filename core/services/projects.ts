import { type FieldError, quoted, ServiceError, validationError } from '../errors.ts';
import { columnNameProblems } from '../columns/column-names.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import { releaseBuilderCredits, reserveBuilderCredits } from '../credits/charges.ts';
import { newId } from '../ids.ts';
import { planRules } from '../plans.ts';
import { settingsView } from './project-settings.ts';
import { checkProjectQuota } from './quotas.ts';
import type { Project, Workspace } from '../model.ts';
import { columnView } from '../columns/column-view.ts';
import { emptyTemplate } from '../plugins/form-template.ts';
import { type AnyBuilder, summaryOf } from '../plugins/plugin-types.ts';
import { rowValues } from '../rows/row-view.ts';
import { schemaErrors } from '../schema/validate.ts';
import { BUILDER_RUN_JOB } from '../jobs/job-names.ts';

/** A catalog item of GET /project-builders. */
export function builderCatalogItem(b: AnyBuilder) {
  return {
    builder_id: b.id,
    name: b.name,
    summary: summaryOf(b),
    description: b.description,
    category: b.category,
    cost: b.cost,
    max_rows: b.maxRows,
    form_data: emptyTemplate(b.input) as Record<string, unknown>,
    schema: b.input,
  };
}

export const iso = (ms: number): string => new Date(ms).toISOString();

export function projectSummary(p: Project, companyCount: number) {
  return {
    id: p.id,
    name: p.name,
    creator_id: p.creatorId,
    company_count: companyCount,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

/** The run a POST /projects body asks for, checked: its builder, the input columns, the rows it aims at. */
export async function plannedBuild(
  kernel: Kernel,
  workspace: Workspace,
  input: { builder_id: string; form_data: Record<string, unknown> },
) {
  const builder = kernel.plugins.builder(input.builder_id);
  if (!builder) {
    const known = kernel.plugins
      .listBuilders()
      .map((b) => b.id)
      .join(', ');
    throw validationError(`Unknown builder_id ${quoted(input.builder_id)}; use one of: ${known} (GET /project-builders lists them)`, [
      { path: 'builder_id', message: 'is not a registered builder' },
    ]);
  }
  const errors = schemaErrors(builder.input, input.form_data, 'form_data');
  if (errors.length) {
    throw validationError(
      `form_data does not fit builder "${builder.id}": ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      errors,
    );
  }
  // An uploaded file the form names: this workspace's, and fully stored; the builder reads its start.
  const uploadId = builder.uploads && typeof input.form_data.upload_id === 'string' ? input.form_data.upload_id : undefined;
  const upload = uploadId ? await kernel.storage.uploads.get(workspace.id, uploadId) : undefined;
  const head = upload?.completedAt ? upload : undefined;
  if (head?.projectId != null) {
    throw validationError('This file is imported by another project already; upload it again for a new project', [
      { path: 'form_data.upload_id', message: 'is imported by another project' },
    ]);
  }
  const columns = builder.columns(input.form_data, head); // may refuse the form (e.g. a CSV without header)
  const problems = columnNameProblems(columns, 0, 'form_data');
  if (problems.length) throw validationError(`The builder's columns cannot be made: ${(problems[0] as FieldError).message}`, problems);
  const rowQuota = planRules(workspace.plan).maxRowsPerProject ?? Number.POSITIVE_INFINITY;
  const target = Math.min(builder.target(input.form_data, head), builder.maxRows, rowQuota);
  return { builder, columns, target, upload: head };
}

/**
 * POST /projects: checks the builder and its form, creates the project with its input columns,
 * and queues the run. Answers before the builder has produced anything.
 */
export async function createProjectFromBuilder(
  kernel: Kernel,
  workspace: Workspace,
  input: { builder_id: string; form_data: Record<string, unknown>; name?: string },
  keyId?: string,
): Promise<{ project_id: string }> {
  const { builder, columns, target, upload } = await plannedBuild(kernel, workspace, input);
  await checkProjectQuota(kernel, workspace);
  const projectId = newId();
  // The file is this project's before its run can start (one project imports a file; it goes when the run ends).
  if (upload && !(await kernel.storage.uploads.attach(upload.id, projectId))) {
    throw validationError('This file is imported by another project already; upload it again for a new project', [
      { path: 'form_data.upload_id', message: 'is imported by another project' },
    ]);
  }
  await reserveBuilderCredits(kernel, workspace.id, projectId, builder, target, keyId); // 402 when the balance or the key's cap is short
  let project: Project;
  try {
    // The project and its builder run's job commit together; with Redis away the job waits in the outbox.
    project = await writeStartingJobs(
      kernel,
      (created: Project) => [{ type: BUILDER_RUN_JOB, payload: { project_pk: created.pk }, tenant: created.workspaceId }],
      (jobs) =>
        kernel.storage.projects.create(
          {
            id: projectId,
            workspaceId: workspace.id,
            creatorId: workspace.id,
            name: (input.name?.trim() || builder.projectName(input.form_data, upload)).slice(0, 255),
            builderId: builder.id,
            formData: input.form_data,
            columns: columns.map((name) => ({ name, type: 'input' as const })),
          },
          jobs,
        ),
    );
  } catch (e) {
    await releaseBuilderCredits(kernel, workspace.id, projectId, builder);
    throw e;
  }
  return { project_id: project.id };
}

export async function projectDetails(kernel: Kernel, project: Project) {
  const { projects, rows } = kernel.storage;
  const columns = await projects.columns(project.pk);
  const toolCols = columns.filter((c) => c.type === 'tool').map((c) => c.no);
  const [first, counts] = await Promise.all([rows.first(project.pk, toolCols), rows.counts([project.pk])]);
  // A run cut short by a row limit logs why (core/handlers/run-builder.ts); a project runs its builder once.
  const warning = [...project.executionLog].reverse().find((e) => e.step === 'warning');
  return {
    id: project.id,
    name: project.name,
    builder_id: project.builderId,
    columns: columns.map((c) => columnView(c, kernel.plugins)),
    first_company_data: rowValues(columns, first),
    row_count: counts.get(project.pk) ?? 0,
    builder_status: {
      type: project.builderStatus,
      error_message: project.builderError,
      ...(project.builderProgress && ['queued', 'running'].includes(project.builderStatus) ? { progress: project.builderProgress } : {}),
      ...(warning ? { warning: warning.message } : {}),
    },
    ...(project.builderId ? { lead_gen_execution_log: project.executionLog } : {}),
    settings: settingsView(project.settings),
    createdAt: iso(project.createdAt),
    updatedAt: iso(project.updatedAt),
  };
}

/** PATCH /projects/{id}: renames the project; answers its details as GET /projects/{id} does. */
export async function renameProject(kernel: Kernel, project: Project, name: string) {
  if (name.trim() === '') throw validationError('name is blank: give the project a name', [{ path: 'name', message: 'must not be blank' }]);
  await kernel.storage.projects.rename(project.pk, name);
  const renamed = await kernel.storage.projects.getByPk(project.pk);
  if (!renamed) throw new ServiceError('not_found', 'Project not found (deleted meanwhile)');
  return projectDetails(kernel, renamed);
}
