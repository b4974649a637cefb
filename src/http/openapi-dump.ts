import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../app.ts";
import { systemClock } from "../clock.ts";
import { loadConfig } from "../config.ts";
import type { AppContext } from "../context.ts";
import { createLogger } from "../log.ts";
import { createRegistry } from "../platform/host/registry.ts";
import { createStorage } from "../storage/index.ts";

/**
 * The description /openapi.json serves, read from an app built with no database behind it (describing
 * routes touches none), so tooling can lint it without starting a server.
 */
export async function openApiDocument(env: Record<string, string | undefined> = process.env): Promise<string> {
  // A scratch DATA_DIR: building the storage makes its folder, and nothing is kept.
  const dataDir = mkdtempSync(join(tmpdir(), "crier-openapi-"));
  const config = loadConfig({ ...env, DATA_DIR: dataDir, LOG_LEVEL: "error" });
  const ctx = {
    config,
    clock: systemClock,
    log: createLogger("error"),
    platforms: createRegistry(),
    storage: createStorage(config),
  } as AppContext;
  try {
    const res = await createApp(ctx).handle(new Request("http://localhost/openapi.json"));
    if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
    return await res.text();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
