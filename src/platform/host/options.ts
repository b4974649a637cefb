import { Value } from "@sinclair/typebox/value";
import type { Plugin } from "../sdk.ts";

/** platform_options as handed to the plugin: what its schema knows, unknown keys dropped (they stay stored). */
export function optionsForPlugin(plugin: Plugin, options: Record<string, unknown> | null): Record<string, unknown> {
  const copy = structuredClone(options ?? {});
  return Value.Clean(plugin.optionsSchema, copy) as Record<string, unknown>;
}
