/**
 * Security issue 26, item 7 (files and output): a bad DATABASE_URL is never echoed with its password, and
 * a DATA_DIR Crier creates is private (0700, its files 0600), with a warning for one others can read.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";

const SECRET = "hunter2-very-secret";

describe("DATABASE_URL on a configuration error", () => {
  for (const url of [
    `mysql://admin:${SECRET}@db.example:3306/crier`,
    `postgres://admin:${SECRET}@db example/crier`,
    `postgres://admin:${SECRET}@db.example:5432/crier`,
  ]) {
    test(`never prints the password (${url.split(":")[0]}${url.includes(" ") ? ", unparsable" : ""})`, async () => {
      // The last URL is valid: the error is another variable's, and nothing may echo DATABASE_URL either.
      const env: Record<string, string> = {
        DATABASE_URL: url,
        LOG_LEVEL: "silent",
        SECRET_KEY: "x".repeat(40),
        DATA_DIR: mkdtempSync(join(tmpdir(), "crier-sec-")),
      };
      if (url.startsWith("postgres://admin:hunter2-very-secret@db.example:5432")) env.PORT = "not-a-port";
      const r = await runCli(["migrate"], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toStartWith("crier: ");
      expect(r.stderr + r.stdout).not.toContain(SECRET);
      expect(r.stderr + r.stdout).not.toContain("admin:");
    });
  }
});

/** Every path under `dir` with its permission bits. */
function modes(dir: string): { path: string; mode: number; dir: boolean }[] {
  const out: { path: string; mode: number; dir: boolean }[] = [];
  const walk = (p: string) => {
    const s = statSync(p);
    out.push({ path: p, mode: s.mode & 0o777, dir: s.isDirectory() });
    if (s.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(dir);
  return out;
}

describe("DATA_DIR permissions", () => {
  test("a new DATA_DIR is 0700 and every file Crier writes in it (database, secret, media) is 0600", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "crier-sec-")), "data");
    const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn" };
    const migrated = await runCli(["migrate"], env);
    expect(migrated.code).toBe(0);
    // A profile and key make the database write more files; media cleanup creates the media directory.
    expect((await runCli(["profiles", "create", "--name", "p"], env)).code).toBe(0);
    expect((await runCli(["media", "cleanup"], env)).code).toBe(0);
    const all = modes(dataDir);
    expect(all.some((e) => e.path.endsWith("PG_VERSION"))).toBe(true);
    expect(all.some((e) => e.path.endsWith("secret.key"))).toBe(true);
    const open = all.filter((e) => (e.dir ? e.mode !== 0o700 : (e.mode & 0o077) !== 0));
    expect(open.map((e) => `${e.path.slice(dataDir.length)} ${e.mode.toString(8)}`)).toEqual([]);
  });

  test("an existing DATA_DIR others can read gets a warning on start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "crier-sec-"));
    chmodSync(dataDir, 0o755);
    const r = await runCli(["migrate"], { DATA_DIR: dataDir, LOG_LEVEL: "warn" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("DATA_DIR");
    expect(r.stderr).toContain("chmod 700");
    // Crier does not change the operator's choice for them.
    expect(statSync(dataDir).mode & 0o777).toBe(0o755);

    const private_ = mkdtempSync(join(tmpdir(), "crier-sec-"));
    chmodSync(private_, 0o700);
    mkdirSync(join(private_, "media"), { mode: 0o700 });
    const quiet = await runCli(["migrate"], { DATA_DIR: private_, LOG_LEVEL: "warn" });
    expect(quiet.stderr).not.toContain("chmod 700");
  });
});
