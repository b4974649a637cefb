import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startServe } from "../support/cli.ts";
import { killInFreshPidNamespace, pidNamespacesAvailable } from "../support/pid-namespace.ts";

const SECRET_KEY = "lock-test-secret-0123456789abcdef";

// Docker runs crier as PID 1: after kill -9 the next container is PID 1 again and must not take the
// dead predecessor's lock file for a live process.
test.skipIf(!pidNamespacesAvailable())(
  "after kill -9 of PID 1 in a fresh PID namespace, a restart in another fresh namespace starts",
  async () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "crier-pidns-")), SECRET_KEY };
    const outcome = await killInFreshPidNamespace(env);
    expect(outcome.pidInLockFile).toBe(1);
    const again = await killInFreshPidNamespace(env);
    expect(again.pidInLockFile).toBe(1);
    expect(again.readyStatus).toBe(200);
  },
  120_000,
);

test("a second serve on the same data directory exits naming the holder, and starts once the holder is gone", async () => {
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "crier-lock-")), SECRET_KEY };
  const first = await startServe(env);
  try {
    const second = await runCli(["serve"], { ...env, PORT: "0" });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another Crier process (pid ${first.proc.pid})`);
  } finally {
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  }
  // The dead holder's pid is still in the file; the OS lock died with it.
  expect(readFileSync(join(env.DATA_DIR, "crier.lock"), "utf8")).toBe(String(first.proc.pid));
  const next = await startServe(env);
  try {
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
  } finally {
    expect(await next.stop()).toBe(0);
  }
}, 120_000);
