import { listBuilders } from './builders.ts';
import type { AnyOperation } from './operation.ts';
import { createProject, getProject, listProjects } from './projects.ts';
import { addRowOp, getRowOp, listRowsOp } from './rows.ts';

/** The operation table: every public action, from which REST routes, OpenAPI and MCP tools are generated. */
export const operations: AnyOperation[] = [listBuilders, createProject, listProjects, getProject, addRowOp, listRowsOp, getRowOp];
