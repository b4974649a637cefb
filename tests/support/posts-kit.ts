import { PLUGINS, EMULATORS } from "../../plugins/index.ts";
import bluesky from "../../plugins/bluesky/index.ts";
import { createRegistry } from "../../src/platform/registry.ts";
import type { Plugin } from "../../src/platform/sdk.ts";
import type { Config } from "../../src/config.ts";
import { createHarness } from "./harness.ts";

/** A harness whose registry surely holds the Bluesky plugin (until plugins/index.ts lists it). */
export function postsHarness(overrides: { env?: Record<string, string> } = {}) {
  const plugins: Record<string, Plugin> = { bluesky: bluesky as unknown as Plugin, ...PLUGINS };
  return createHarness((overrides.env ? { env: overrides.env } : {}) as Partial<Config>, { platforms: createRegistry(plugins, EMULATORS) });
}
