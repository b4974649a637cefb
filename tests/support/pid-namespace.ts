import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startServe } from "./cli.ts";

const UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"];

/** Fresh PID namespaces need root (or user namespaces) and util-linux's unshare. */
export function pidNamespacesAvailable(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  return Bun.spawnSync([...UNSHARE, "true"]).exitCode === 0;
}

/**
 * Starts `crier serve` as PID 1 of a new PID namespace (as in a container), checks it is ready, then kills
 * it with SIGKILL the way `docker kill` or the OOM killer would. Returns what a restart needs to know.
 */
export async function killInFreshPidNamespace(env: Record<string, string>, binary?: string) {
  const server = await startServe(env, { wrap: UNSHARE, binary });
  const readyStatus = (await fetch(`${server.url}/readyz`)).status;
  const pidInLockFile = Number(readFileSync(join(env.DATA_DIR!, "crier.lock"), "utf8"));
  // unshare --fork waits for its one child, which is the namespace's PID 1.
  const unsharePid = server.proc.pid;
  const child = Number(readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, "utf8").trim().split(/\s+/)[0]);
  if (!(child > 1)) throw new Error(`no child of unshare (pid ${unsharePid}) found`);
  process.kill(child, "SIGKILL");
  await server.proc.exited;
  return { readyStatus, pidInLockFile };
}
