import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCli, startServe } from "../support/cli.ts";
import { sql } from "drizzle-orm";
import { openPglite } from "../../src/db/client.ts";
import { applyNumberedMigrations, emptyDatabase, testDatabase } from "../support/db.ts";
import { killInFreshPidNamespace, pidNamespacesAvailable } from "../support/pid-namespace.ts";
import type { Db } from "../../src/db/client.ts";
import { rawHttp } from "../support/raw-http.ts";
import { openApiDocument } from "../../src/http/openapi-dump.ts";
import { SETTLE_MS } from "../../src/os/startup-memory.ts";

// Builds the real single executable and runs it from an empty directory with no node_modules.
let binary: string;
let db: (Db & { url?: string }) | undefined;
const env: Record<string, string> = { SECRET_KEY: "binary-test-secret-0123456789abcdef" };

beforeAll(async () => {
  binary = join(mkdtempSync(join(tmpdir(), "crier-bin-")), "crier");
  const build = Bun.spawn([process.execPath, "scripts/build.ts"], {
    cwd: ROOT,
    env: { ...process.env, CRIER_BUILD_OUTFILE: binary },
    stdout: "pipe",
    stderr: "pipe",
  });
  const code = await build.exited;
  if (code !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
  if (process.env.TEST_DATABASE_URL) {
    db = await testDatabase();
    env.DATABASE_URL = db.url!;
  }
}, 120_000);
afterAll(async () => {
  await db?.close();
});

test("the compiled binary serves, creates a key, lists accounts and stops cleanly from an empty directory", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "crier-empty-"));
  const runEnv = { ...env, DATA_DIR: join(cwd, "data"), PUBLIC_URL: "http://crier.test" };
  const server = await startServe(runEnv, { binary, cwd });
  try {
    const key = await runCli(["keys", "create", "--name", "smoke"], runEnv, { binary, cwd });
    expect(key.code).toBe(0);
    const res = await fetch(`${server.url}/v1/accounts`, { headers: { authorization: `Bearer ${key.lastLine}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [] });
    const docs = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
    expect(docs.status).toBe(200);
    // HTTP/1.0 without a Host header: the app's own answers, never Bun's HTML developer error page.
    const port = Number(new URL(server.url).port);
    const health = await rawHttp(port, "GET /healthz HTTP/1.0\r\n\r\n");
    expect(health.status).toBe(200);
    const noKey = await rawHttp(port, "GET /v1/accounts HTTP/1.0\r\n\r\n");
    expect(noKey.status).toBe(401);
    expect(noKey.body).not.toContain("<html");
    expect(JSON.parse(noKey.body).error.code).toBe("invalid_api_key");
    const tooLarge = await rawHttp(
      port,
      `POST /v1/drafts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.lastLine}\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 ** 4}\r\nConnection: close\r\n\r\n{`,
    );
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body).error.code).toBe("payload_too_large");
    // One description, byte for byte, from the binary (after it served other requests) and from source.
    const served = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(served).toBe(await openApiDocument(runEnv));
    // The embedded database's file bundle was copied out of the executable once, to be mapped rather than
    // held in memory; on PostgreSQL there is no embedded database and nothing to copy.
    const runtime = join(cwd, "data", "pglite-runtime");
    if (env.DATABASE_URL) expect(existsSync(runtime)).toBe(false);
    else expect(readdirSync(runtime)).toEqual([expect.stringMatching(/^pglite-.*\.data$/)]);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 60_000);

test("a binary started right after it was written lets go of its embedded files once the server is up", async () => {
  // A copy written just now, as an install or a download leaves it: its pages are still dirty in the
  // kernel's cache, which cannot page out a dirty page until it is written to disk.
  const dir = mkdtempSync(join(tmpdir(), "crier-bin-fresh-"));
  const fresh = join(dir, "crier");
  writeFileSync(fresh, readFileSync(binary), { mode: 0o755 });
  const runEnv = { ...env, DATA_DIR: join(dir, "data") };
  const server = await startServe(runEnv, { binary: fresh, cwd: dir });
  try {
    const embeddedMb = () => embeddedFilesResidentMb(server.proc.pid, fresh);
    const deadline = Date.now() + SETTLE_MS + 5_000;
    while (embeddedMb() >= 8 && Date.now() < deadline) await Bun.sleep(200);
    // About 20 MB of embedded files (PGlite's runtime and the seed) are read at start; what stays is what
    // the server goes on reading.
    expect(embeddedMb()).toBeLessThan(8);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 60_000);

/** Resident MB of the executable's largest writable mapping: the one that holds its embedded files. */
function embeddedFilesResidentMb(pid: number, exe: string): number {
  const mappings: { header: string; size: number; rss: number }[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) mappings.push({ header: line, size: 0, rss: 0 });
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line);
    const current = mappings.at(-1);
    if (field && current) current[field[1] === "Size" ? "size" : "rss"] = Number(field[2]);
  }
  const own = mappings.filter((m) => m.header.endsWith(exe) && m.header.includes(" rw-p "));
  const largest = own.sort((x, y) => y.size - x.size)[0];
  if (!largest) throw new Error(`no writable mapping of ${exe}`);
  return largest.rss / 1024;
}

test.skipIf(!pidNamespacesAvailable())(
  "the compiled binary restarts as PID 1 of a fresh namespace after kill -9 (its lock died with it)",
  async () => {
    const cwd = mkdtempSync(join(tmpdir(), "crier-bin-pidns-"));
    const embedded = { SECRET_KEY: env.SECRET_KEY!, DATA_DIR: join(cwd, "data") };
    expect((await killInFreshPidNamespace(embedded, binary)).pidInLockFile).toBe(1);
    expect((await killInFreshPidNamespace(embedded, binary)).readyStatus).toBe(200);
  },
  120_000,
);

test("the binary's migrate brings a database at the last numbered migration up to the function files it embeds", async () => {
  // As a release before the function files left it: numbered migrations only.
  const cwd = mkdtempSync(join(tmpdir(), "crier-upgrade-"));
  const runEnv: Record<string, string> = { ...env, DATA_DIR: join(cwd, "data") };
  mkdirSync(runEnv.DATA_DIR, { mode: 0o700 });
  let old: Db;
  if (process.env.TEST_DATABASE_URL) {
    old = await emptyDatabase();
    runEnv.DATABASE_URL = old.url!;
  } else old = await openPglite(join(cwd, "data", "pglite"));
  try {
    await applyNumberedMigrations(old);
    if (!process.env.TEST_DATABASE_URL) await old.close();
    const res = await runCli(["migrate"], runEnv, { binary, cwd });
    expect({ code: res.code, stderr: res.stderr }).toMatchObject({ code: 0 });
    const after = process.env.TEST_DATABASE_URL ? old : await openPglite(join(cwd, "data", "pglite"));
    try {
      const recorded = await after.rows<{ name: string }>(
        sql`SELECT name FROM drizzle.crier_repeatable_migrations ORDER BY name`,
      );
      const files = readdirSync(join(ROOT, "migrations", "functions")).map((f) => f.replace(/\.sql$/, ""));
      expect(recorded.map((r) => r.name)).toEqual(files.sort());
    } finally {
      if (after !== old) await after.close();
    }
  } finally {
    if (process.env.TEST_DATABASE_URL) await old.close();
  }
}, 120_000);
