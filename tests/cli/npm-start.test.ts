/**
 * `npm start` under a process supervisor: SIGTERM sent to the npm process (what systemd, Docker and
 * Kubernetes send to the process they started) must stop the server beneath it, not leave it orphaned
 * and still listening.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/cli.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out = Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(pid)]);
  return new TextDecoder()
    .decode(out.stdout)
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

/** Every process below `pid`, however deep (npm → sh → bun without exec). */
function descendantsOf(pid: number): number[] {
  const direct = childrenOf(pid);
  return [...direct, ...direct.flatMap(descendantsOf)];
}

test("SIGTERM to `npm start` stops the server under it", async () => {
  const npm = Bun.spawn(["npm", "start"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      DATA_DIR: mkdtempSync(join(tmpdir(), "crier-npm-start-")),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
    },
    stdout: "ignore",
    stderr: "pipe",
  });
  let below: number[] = [];
  try {
    const reader = npm.stderr.getReader();
    let seen = "";
    let url: string | undefined;
    const deadline = Date.now() + 60_000;
    while (!url && Date.now() < deadline) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`npm start exited early: ${seen}`);
      seen += new TextDecoder().decode(value);
      url = /listening on (http:\/\/[^\s]+)/.exec(seen)?.[1];
    }
    if (!url) throw new Error(`npm start did not announce its address: ${seen}`);
    void (async () => {
      while (!(await reader.read()).done);
    })();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    below = descendantsOf(npm.pid);
    expect(below.length).toBeGreaterThan(0);

    npm.kill("SIGTERM");
    await npm.exited;
    // The server finishes in-flight work for a moment after npm is gone; give it that, no more.
    for (let i = 0; i < 100 && below.some(alive); i++) await Bun.sleep(100);
    expect(below.filter(alive)).toEqual([]);
    const after = await fetch(`${url}/healthz`).then(
      (r) => r.status,
      () => "refused",
    );
    expect(after).toBe("refused");
  } finally {
    // A server left behind by a regression must not outlive the test.
    for (const pid of below) if (alive(pid)) process.kill(pid, "SIGKILL");
    if (alive(npm.pid)) npm.kill("SIGKILL");
  }
}, 90_000);
