import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";

/** The newest PostgreSQL server binaries installed (Debian: /usr/lib/postgresql/<major>/bin). */
function pgBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const majors = readdirSync(root)
    .filter((d) => existsSync(join(root, d, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? join(root, majors[0], "bin") : null;
}

/** A cluster of our own needs the server binaries and root (it runs as the `postgres` OS user). */
export function privatePostgresAvailable(): boolean {
  return process.getuid?.() === 0 && pgBin() !== null && Bun.spawnSync(["id", "-u", "postgres"]).exitCode === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function asPostgres(args: string[]) {
  const r = Bun.spawnSync(["runuser", "-u", "postgres", "--", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")}: ${r.stderr.toString()}${r.stdout.toString()}`);
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

/**
 * initdb in a temp dir (under `parent`, else the system's temp dir), started on a port of its own with trust
 * auth on 127.0.0.1, so a test may stop it.
 */
export async function startPrivatePostgres(parent = tmpdir()): Promise<PrivatePostgres> {
  const bin = pgBin()!;
  const dir = mkdtempSync(join(parent, "crier-pg-"));
  chownSync(dir, Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString()), 0);
  const data = join(dir, "data");
  const port = await freePort();
  asPostgres([join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync"]);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgctl = (...a: string[]) => asPostgres([join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "log"), "-w", ...a]);
  pgctl("-o", opts, "start");
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => pgctl("-m", "fast", "stop"),
    start: () => pgctl("-o", opts, "start"),
    destroy() {
      try {
        pgctl("-m", "immediate", "stop");
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
