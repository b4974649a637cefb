/**
 * Start-up warnings about platform settings: a LinkedIn version near or past its sunset is logged when
 * the server starts, only for platforms this server is configured for.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { startupWarnings } from "../../src/platform/host/startup-warnings.ts";

const linkedinApp = { CRIER_LINKEDIN_CLIENT_ID: "id", CRIER_LINKEDIN_CLIENT_SECRET: "secret" };
const host = (env: Record<string, string>) => ({
  config: loadConfig({ LOG_LEVEL: "silent", ...env }),
  platforms: createRegistry(),
});

test("a configured LinkedIn version within two months of its sunset is warned about; unconfigured LinkedIn says nothing", () => {
  const now = new Date("2026-11-26T12:00:00Z");
  expect(startupWarnings(host({ ...linkedinApp, CRIER_LINKEDIN_VERSION: "202601" }), now)).toEqual([
    {
      platform: "linkedin",
      message: expect.stringContaining("LinkedIn-Version 202601 is sunset about 2027-01-15"),
    },
  ]);
  expect(startupWarnings(host({ ...linkedinApp, CRIER_LINKEDIN_VERSION: "202604" }), now)).toEqual([]);
  expect(startupWarnings(host({ CRIER_LINKEDIN_VERSION: "202601" }), now)).toEqual([]);
});

test("`crier serve` logs the warning at start", async () => {
  const dir = mkdtempSync(join(tmpdir(), "crier-warn-"));
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve", "--no-scheduler"], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: "",
      ...linkedinApp,
      // Sunset on November 16, 2026 (LinkedIn's migrations page): past on any day this test runs.
      CRIER_LINKEDIN_VERSION: "202511",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  const decoder = new TextDecoder();
  const reader = proc.stderr.getReader();
  try {
    while (!err.includes("LinkedIn-Version")) {
      const { done, value } = await reader.read();
      if (done) break;
      err += decoder.decode(value);
    }
  } finally {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  const line = JSON.parse(err.split("\n").find((l) => l.includes("LinkedIn-Version"))!);
  expect(line).toMatchObject({ level: "warn", platform: "linkedin" });
  expect(line.msg).toContain("LinkedIn-Version 202511 is past its sunset");
}, 60_000);
