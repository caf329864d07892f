import { icpScoreTool } from '../icp/icp-score-tool.ts';
import { PluginDefinitionError, assertBuilder, assertTool } from './definition-checks.ts';
import type { AnyBuilder, AnyTool } from './plugin-types.ts';

/** Tools of kernel features (ICP scoring), registered before any plugin so no plugin can take their ids. */
const KERNEL_TOOLS: unknown[] = [icpScoreTool];

/** The registered plugins, looked up by public id or legacy id. */
export class PluginRegistry {
  private readonly builders = new Map<string, AnyBuilder>();
  private readonly tools = new Map<string, AnyTool>();
  private readonly aliases = new Map<string, string>();

  private claim(ids: string[], where: string): void {
    for (const id of ids) {
      if (this.builders.has(id) || this.tools.has(id) || this.aliases.has(id))
        throw new PluginDefinitionError(where, 'id', `"${id}" is already registered by another plugin`);
    }
  }

  addBuilder(def: unknown, where?: string): void {
    const at = where ?? String((def as { id?: unknown } | undefined)?.id);
    assertBuilder(def, at);
    this.claim([def.id, ...def.legacyIds], at);
    this.builders.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  addTool(def: unknown, where?: string): void {
    const at = where ?? String((def as { id?: unknown } | undefined)?.id);
    assertTool(def, at);
    this.claim([def.id, ...def.legacyIds], at);
    this.tools.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  /** A builder by public slug or legacy id. */
  builder(id: string): AnyBuilder | undefined {
    return this.builders.get(id) ?? this.builders.get(this.aliases.get(id) ?? '');
  }

  /** A tool by public slug or legacy id. */
  tool(id: string): AnyTool | undefined {
    return this.tools.get(id) ?? this.tools.get(this.aliases.get(id) ?? '');
  }

  listBuilders(): AnyBuilder[] {
    return [...this.builders.values()];
  }

  listTools(): AnyTool[] {
    return [...this.tools.values()];
  }
}

/** A registry holding the kernel's own tools, before any plugin: no plugin can take their ids. */
export function kernelRegistry(): PluginRegistry {
  const registry = new PluginRegistry();
  for (const tool of KERNEL_TOOLS) registry.addTool(tool, 'core (kernel tool)');
  return registry;
}
