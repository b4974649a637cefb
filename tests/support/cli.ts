import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..", "..");

export interface CliResult { code: number; stdout: string; stderr: string; lastLine: string }

/** The command under test: the source entry through bun, or a compiled binary. */
export function crierCommand(binary?: string): string[] {
  return binary ? [binary] : [process.execPath, join(ROOT, "src", "main.ts")];
}

export async function runCli(args: string[], env: Record<string, string>, opts: { binary?: string; cwd?: string } = {}): Promise<CliResult> {
  const proc = Bun.spawn([...crierCommand(opts.binary), ...args], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "crier-cwd-")),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const lines = stdout.trimEnd().split("\n");
  return { code, stdout, stderr, lastLine: lines[lines.length - 1] ?? "" };
}

export interface ServeProcess { url: string; proc: ReturnType<typeof Bun.spawn>; stop(): Promise<number>; firstOkMs: number }

/** Starts `crier serve` on a free port and waits for /healthz; reports the time to the first 200. */
export async function startServe(env: Record<string, string>, opts: { binary?: string; cwd?: string; args?: string[] } = {}): Promise<ServeProcess> {
  const port = 20000 + Math.floor(Math.random() * 30000);
  const started = performance.now();
  const proc = Bun.spawn([...crierCommand(opts.binary), "serve", ...(opts.args ?? [])], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "crier-cwd-")),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", PORT: String(port), HOST: "127.0.0.1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`crier serve exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch { /* not up yet */ }
    await Bun.sleep(50);
  }
  const firstOkMs = performance.now() - started;
  return {
    url, proc, firstOkMs,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}
