import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { planRules } from '../plans.ts';

function quotaError(quota: string, limit: number, message: string): ServiceError {
  return new ServiceError('forbidden', { code: 'quota_exceeded', quota, limit, message });
}

/** 403 `quota_exceeded` when the workspace already holds its plan's number of projects. */
export async function checkProjectQuota(kernel: Kernel, workspace: Workspace): Promise<void> {
  const { maxProjects } = planRules(workspace.plan);
  if (maxProjects === null) return;
  if ((await kernel.storage.projects.countLive(workspace.id)) >= maxProjects) {
    throw quotaError(
      'projects',
      maxProjects,
      `The ${workspace.plan} plan holds at most ${maxProjects} projects; delete one or change plan`,
    );
  }
}

/** How many more rows a project may take under the plan (Infinity when unlimited). */
export async function rowRoom(kernel: Kernel, plan: string, projectPk: number): Promise<number> {
  const { maxRowsPerProject } = planRules(plan);
  if (maxRowsPerProject === null) return Number.POSITIVE_INFINITY;
  const rows = (await kernel.storage.rows.counts([projectPk])).get(projectPk) ?? 0;
  return Math.max(0, maxRowsPerProject - rows);
}

/** 403 `quota_exceeded` when adding `n` rows would pass the plan's rows per project. */
export async function checkRowQuota(kernel: Kernel, workspace: Workspace, projectPk: number, n: number): Promise<void> {
  if ((await rowRoom(kernel, workspace.plan, projectPk)) < n) {
    const limit = planRules(workspace.plan).maxRowsPerProject as number;
    throw quotaError('rows_per_project', limit, `The ${workspace.plan} plan holds at most ${limit} rows per project`);
  }
}
