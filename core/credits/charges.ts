import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { BuilderCheckpoint } from '../model.ts';
import type { AnyBuilder } from '../plugins/plugin-types.ts';
import { keyCapError } from './key-caps.ts';

/**
 * Charging rules (issue "Credits, plans, quotas"): a builder reserves `target × cost` when the
 * project is created, spends `cost` per row it writes, and gives the rest back when the run ends.
 */
export function builderReservation(builder: AnyBuilder, target: number): number {
  return Math.max(0, builder.cost.credits) * target;
}

/**
 * A run after the project's first (a schedule's): its reservation and refund are its own, and it
 * settles knowing the rows the earlier runs paid for (they are in the project's builder net).
 */
export interface BuilderRunScope {
  run: string;
  rowsBefore: number;
}

/** The scope a run's checkpoint names (none: the project's first run). */
export const runScopeOf = (checkpoint: BuilderCheckpoint | null | undefined): BuilderRunScope | undefined =>
  checkpoint?.run ? { run: checkpoint.run, rowsBefore: checkpoint.rows_before ?? 0 } : undefined;

const reserveKey = (projectId: string, scope?: BuilderRunScope) =>
  scope ? `builder:${projectId}:${scope.run}:reserve` : `builder:${projectId}:reserve`;
const refundKey = (projectId: string, scope?: BuilderRunScope) =>
  scope ? `builder:${projectId}:${scope.run}:refund` : `builder:${projectId}:refund`;

/** Reserves a builder run's credits before the project exists; 402 `insufficient_credits` otherwise. */
export async function reserveBuilderCredits(
  kernel: Kernel,
  workspaceId: string,
  projectId: string,
  builder: AnyBuilder,
  target: number,
  keyId?: string,
  scope?: BuilderRunScope,
): Promise<number> {
  const amount = builderReservation(builder, target);
  if (amount === 0) return 0;
  const reserve = () =>
    kernel.storage.credits.debit(workspaceId, 'reserve', amount, {
      projectId,
      pluginId: builder.id,
      idemKey: reserveKey(projectId, scope),
      note: `${builder.id}: up to ${target} rows`,
      keyId: keyId ?? null,
    });
  let answer = await reserve();
  if (answer === 'key_cap') {
    const month = keyId ? await kernel.storage.credits.keyMonth(keyId) : null;
    if (month) throw keyCapError(month, amount);
    answer = await reserve(); // the cap was removed meanwhile
    if (answer === 'key_cap')
      throw new ServiceError('conflict', "This API key's monthly cap changed while the run was being reserved; try again");
  }
  if (answer === 'insufficient') {
    const balance = await kernel.storage.credits.balance(workspaceId);
    throw new ServiceError('insufficient_credits', {
      code: 'insufficient_credits',
      message: `This run needs ${amount} credits (${target} rows × ${builder.cost.credits}); the balance is ${balance}. Lower max_results or add credits.`,
      needed: amount,
      balance,
    });
  }
  return amount;
}

/** Gives back what a finished run did not spend (idempotent: a second call changes nothing). */
export async function settleBuilderCredits(
  kernel: Kernel,
  workspaceId: string,
  projectId: string,
  builder: AnyBuilder,
  rowsCreated: number,
  scope?: BuilderRunScope,
): Promise<void> {
  if (builder.cost.credits <= 0) return;
  const held = await kernel.storage.credits.projectNet(projectId, builder.id);
  const spent = ((scope?.rowsBefore ?? 0) + rowsCreated) * builder.cost.credits;
  if (held - spent <= 0) return;
  await kernel.storage.credits.refund(
    workspaceId,
    held - spent,
    {
      projectId,
      pluginId: builder.id,
      idemKey: refundKey(projectId, scope),
      note: `${builder.id}: ${rowsCreated} rows written`,
    },
    { charge: reserveKey(projectId, scope) },
  ); // what the key did not spend goes back to the month it reserved in
}

/** Returns a whole reservation (the project could not be created or started). */
export async function releaseBuilderCredits(
  kernel: Kernel,
  workspaceId: string,
  projectId: string,
  builder: AnyBuilder,
  scope?: BuilderRunScope,
): Promise<void> {
  await settleBuilderCredits(kernel, workspaceId, projectId, builder, 0, scope);
}
