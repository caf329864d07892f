import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { AnyBuilder } from '../plugins/plugin-types.ts';
import { keyCapError } from './key-caps.ts';

/**
 * Charging rules (issue "Credits, plans, quotas"): a builder reserves `target × cost` when the
 * project is created, spends `cost` per row it writes, and gives the rest back when the run ends.
 */
export function builderReservation(builder: AnyBuilder, target: number): number {
  return Math.max(0, builder.cost.credits) * target;
}

const reserveKey = (projectId: string) => `builder:${projectId}:reserve`;
const refundKey = (projectId: string) => `builder:${projectId}:refund`;

/** Reserves a builder run's credits before the project exists; 402 `insufficient_credits` otherwise. */
export async function reserveBuilderCredits(
  kernel: Kernel,
  workspaceId: string,
  projectId: string,
  builder: AnyBuilder,
  target: number,
  keyId?: string,
): Promise<number> {
  const amount = builderReservation(builder, target);
  if (amount === 0) return 0;
  const reserve = () =>
    kernel.storage.credits.debit(workspaceId, 'reserve', amount, {
      projectId,
      pluginId: builder.id,
      idemKey: reserveKey(projectId),
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
): Promise<void> {
  if (builder.cost.credits <= 0) return;
  const held = await kernel.storage.credits.projectNet(projectId, builder.id);
  const spent = rowsCreated * builder.cost.credits;
  if (held - spent <= 0) return;
  await kernel.storage.credits.refund(
    workspaceId,
    held - spent,
    {
      projectId,
      pluginId: builder.id,
      idemKey: refundKey(projectId),
      note: `${builder.id}: ${rowsCreated} rows written`,
    },
    { charge: reserveKey(projectId) },
  ); // what the key did not spend goes back to the month it reserved in
}

/** Returns a whole reservation (the project could not be created or started). */
export async function releaseBuilderCredits(kernel: Kernel, workspaceId: string, projectId: string, builder: AnyBuilder): Promise<void> {
  await settleBuilderCredits(kernel, workspaceId, projectId, builder, 0);
}
