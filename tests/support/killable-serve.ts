// `crier serve` as a child process a test may kill -9 (crash and delivery-after-restart tests): started from
// source with the test's environment on top of this process's, its address read from its announcement.
import { spawn, type ChildProcess } from "node:child_process";

export function startKillableServe(
  env: Record<string, string>,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn("node_modules/.bin/bun", ["src/main.ts", "serve"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`crier serve exited with ${code}: ${err}`)));
  });
}

/** Resolves once the child has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
  );

/** Polls `probe` every 50 ms until it gives a value, for at most `seconds`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  seconds = 40,
): Promise<T> {
  for (let i = 0; i < seconds * 20; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await Bun.sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}
