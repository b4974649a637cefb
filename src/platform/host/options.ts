import { Value } from "@sinclair/typebox/value";
import type { DeclaredMediaRequirements, Plugin } from "../sdk.ts";

/** An alias and its option given with different meanings: the target is refused (the caller must choose). */
export interface AliasConflict {
  alias: string;
  option: string;
}

/** The options with each declared alias rewritten to the plugin's own name, and the aliases that disagree. */
export function resolveAliases(
  plugin: Plugin,
  options: Record<string, unknown>,
): { options: Record<string, unknown>; conflicts: AliasConflict[] } {
  const out = { ...options };
  const conflicts: AliasConflict[] = [];
  for (const [alias, { option, values }] of Object.entries(plugin.optionAliases ?? {})) {
    if (!(alias in out)) continue;
    const raw = out[alias];
    const meant = values && typeof raw === "string" && raw in values ? values[raw] : raw;
    delete out[alias];
    if (option in out && out[option] !== meant) conflicts.push({ alias, option });
    else out[option] = meant;
  }
  return { options: out, conflicts };
}

/** platform_options as handed to the plugin: aliases resolved, what its schema knows, unknown keys dropped (they stay stored). */
export function optionsForPlugin(plugin: Plugin, options: Record<string, unknown> | null): Record<string, unknown> {
  const copy = structuredClone(resolveAliases(plugin, options ?? {}).options);
  return Value.Clean(plugin.optionsSchema, copy) as Record<string, unknown>;
}

/**
 * The media requirements a target is checked against: the plugin's for the surface its options choose
 * (mediaRequirementsFor, an Instagram Story or a Facebook Reel), else the declaration's.
 */
export function requirementsFor(plugin: Plugin, options: Record<string, unknown> | null): DeclaredMediaRequirements {
  return plugin.mediaRequirementsFor?.(optionsForPlugin(plugin, options) as never) ?? plugin.mediaRequirements;
}
