import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..", "..");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  lastLine: string;
}

/** The command under test: the source entry through bun, or a compiled binary. */
export function crierCommand(binary?: string): string[] {
  return binary ? [binary] : [process.execPath, join(ROOT, "src", "main.ts")];
}

export async function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { binary?: string; cwd?: string } = {},
): Promise<CliResult> {
  const proc = Bun.spawn([...crierCommand(opts.binary), ...args], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "crier-cwd-")),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const lines = stdout.trimEnd().split("\n");
  return { code, stdout, stderr, lastLine: lines[lines.length - 1] ?? "" };
}

export interface ServeProcess {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  stop(): Promise<number>;
  firstOkMs: number;
  /** What the server wrote on stderr so far (its start-up warnings come before the address). */
  stderr(): string;
}

/** Starts `crier serve` on a port the system picks (PORT=0) and waits for /healthz; reports the time to the first 200. */
export async function startServe(
  env: Record<string, string>,
  /** `wrap`: a command the server runs under, e.g. `unshare --pid --fork --mount-proc`. */
  opts: { binary?: string; cwd?: string; args?: string[]; wrap?: string[] } = {},
): Promise<ServeProcess> {
  const started = performance.now();
  const proc = Bun.spawn([...(opts.wrap ?? []), ...crierCommand(opts.binary), "serve", ...(opts.args ?? [])], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "crier-cwd-")),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: "warn",
      PORT: "0",
      HOST: "127.0.0.1",
      ...env,
    },
    stdout: "ignore",
    stderr: "pipe",
  });
  // serve announces its address on stderr ("Crier is listening on http://…"); keep draining afterwards.
  const reader = proc.stderr.getReader();
  let seen = "";
  let url: string | undefined;
  const deadline = Date.now() + 60_000;
  while (!url && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`crier serve exited with ${await proc.exited}: ${seen}`);
    seen += new TextDecoder().decode(value);
    url = /listening on (http:\/\/[^\s]+)/.exec(seen)?.[1];
  }
  if (!url) throw new Error(`crier serve did not announce its address: ${seen}`);
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
  })();
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      /* not up yet */
    }
    await Bun.sleep(20);
  }
  const firstOkMs = performance.now() - started;
  return {
    url,
    proc,
    firstOkMs,
    stderr: () => seen,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}
