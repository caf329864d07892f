import { listBuilders } from './builders.ts';
import { createColumnOp, estimateColumnsOp, getColumnProgress, listColumns, runPendingColumns, updateColumnOp } from './columns.ts';
import { getCredits } from './credits.ts';
import { deleteColumnOp, deleteProject, deleteRows } from './deletes.ts';
import { getFilters, setFilters } from './filters.ts';
import { createIcpOp, deleteIcp, getIcp, getIcpScoreRun, listIcps, scoreIcp, updateIcpOp } from './icps.ts';
import type { AnyOperation } from './operation.ts';
import { createProject, estimateBuilder, getProject, listProjects, updateProject, waitForProject } from './projects.ts';
import { addRowOp, getRowOp, listRowsOp, searchRowsOp, updateRowOp } from './rows.ts';
import { addRowsOp } from './rows-batch.ts';
import { exportProject } from './exports.ts';
import { deleteProjectSchedule, getProjectSchedule, setProjectSchedule } from './schedules.ts';
import { updateProjectSettings } from './settings.ts';
import { getToolStats } from './tool-stats.ts';
import { listTools, searchToolsOp } from './tools.ts';
import {
  createInboundUrlOp,
  createWebhookOp,
  deleteInboundUrl,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
  resendWebhookDelivery,
} from './webhooks.ts';

/** The operation table: every public action, from which REST routes, OpenAPI and MCP tools are generated. */
export const operations: AnyOperation[] = [
  listBuilders,
  createProject,
  estimateBuilder,
  listProjects,
  getProject,
  updateProject,
  waitForProject,
  deleteProject,
  updateProjectSettings,
  setProjectSchedule,
  getProjectSchedule,
  deleteProjectSchedule,
  addRowOp,
  addRowsOp,
  listRowsOp,
  searchRowsOp,
  getRowOp,
  updateRowOp,
  exportProject,
  createInboundUrlOp,
  deleteInboundUrl,
  deleteRows,
  listColumns,
  createColumnOp,
  updateColumnOp,
  deleteColumnOp,
  runPendingColumns,
  estimateColumnsOp,
  getColumnProgress,
  getFilters,
  setFilters,
  listTools,
  searchToolsOp,
  getToolStats,
  listIcps,
  createIcpOp,
  getIcp,
  updateIcpOp,
  deleteIcp,
  scoreIcp,
  getIcpScoreRun,
  getCredits,
  createWebhookOp,
  listWebhooks,
  deleteWebhook,
  listWebhookDeliveries,
  resendWebhookDelivery,
];
