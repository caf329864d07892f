import type { Kernel } from '../kernel.ts';
import type { ExpressionOutcome, Expressions } from '../expressions/expression-pool.ts';
import { log } from '../log.ts';
import type { AnyBuilder, AnyTool, PluginContext, ProviderNeeds, ToolContext } from './plugin-types.ts';

/**
 * The environment a plugin may read: only the variables it declares in `provider.requiredEnv` and
 * `provider.optionalEnv`, read from `source` (the process environment) at call time. A plugin never
 * sees DATABASE_URL, REDIS_URL, the bootstrap key or another plugin's credentials.
 */
export function declaredEnv(
  plugin: { provider?: ProviderNeeds },
  source: Record<string, string | undefined> = process.env,
): (name: string) => string | undefined {
  const allowed = new Set([...(plugin.provider?.requiredEnv ?? []), ...(plugin.provider?.optionalEnv ?? [])]);
  return (name) => (allowed.has(name) ? source[name] : undefined);
}

/** What a builder or tool gets while it runs for a job: its declared env, the job's signal, a tagged log. */
export function pluginContext(
  kernel: Kernel,
  plugin: AnyBuilder | AnyTool,
  signal: AbortSignal,
  fields: Record<string, unknown>,
): PluginContext {
  return {
    providerMode: kernel.config.providerMode,
    env: declaredEnv(plugin),
    signal,
    log: (message, extra) => log.info(message, { ...extra, ...fields, plugin: plugin.id }),
  };
}

/** A tool's context: the plugin context plus the expression sandbox, whose evaluations stop with the job's signal. */
export function toolContext(kernel: Kernel, tool: AnyTool, signal: AbortSignal, fields: Record<string, unknown>): ToolContext {
  const pool = kernel.expressions;
  const expressions: Expressions = {
    evaluateMany: (expression, inputs, bindings) => pool.evaluateMany(expression, inputs, bindings, signal),
    evaluate: async (expression, input, bindings) =>
      (await pool.evaluateMany(expression, [input], bindings, signal))[0] as ExpressionOutcome,
  };
  return { ...pluginContext(kernel, tool, signal, fields), expressions };
}
