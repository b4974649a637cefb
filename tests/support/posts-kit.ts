import type { Config } from "../../src/config.ts";
import { createHarness } from "./harness.ts";

/** The harness, with platform settings (CRIER_<PLATFORM>_*) in the environment the plugins see. */
export function postsHarness(overrides: { env?: Record<string, string> } = {}) {
  return createHarness((overrides.env ? { env: overrides.env } : {}) as Partial<Config>);
}
