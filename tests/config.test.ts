import { expect, test } from "bun:test";
import { readFileSync, statSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../src/config.ts";

const dir = () => mkdtempSync(join(tmpdir(), "crier-config-"));

test("defaults", () => {
  const d = dir();
  const c = loadConfig({ DATA_DIR: d });
  expect(c).toMatchObject({
    port: 8080,
    host: "127.0.0.1",
    publicUrl: "http://127.0.0.1:8080",
    dataDir: d,
    logLevel: "info",
    uploadTicketTtlSeconds: 7200,
  });
  expect(c.databaseUrl).toBeUndefined();
  expect(c.instanceName).toBeUndefined();
  expect(loadConfig({ DATA_DIR: d, INSTANCE_NAME: "  Acme social " }).instanceName).toBe("Acme social");
  expect(c.s3).toBeUndefined();
});

test("SECRET_KEY unset: generated once into DATA_DIR with 0600 and reused", () => {
  const d = dir();
  const a = loadConfig({ DATA_DIR: d }).secretKey;
  const b = loadConfig({ DATA_DIR: d }).secretKey;
  expect(a.equals(b)).toBe(true);
  expect(statSync(join(d, "secret.key")).mode & 0o777).toBe(0o600);
});

const invalid: [Record<string, string>, string][] = [
  [{ PORT: "eighty" }, "PORT"],
  [{ PORT: "70000" }, "PORT"],
  [{ PUBLIC_URL: "not a url" }, "PUBLIC_URL"],
  [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
  [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
  [{ SECRET_KEY: "short" }, "SECRET_KEY"],
  [{ UPLOAD_TICKET_TTL: "soon" }, "UPLOAD_TICKET_TTL"],
  [{ MAX_VIDEO_BYTES: "-1" }, "MAX_VIDEO_BYTES"],
  [{ DATABASE_POOL_SIZE: "0" }, "DATABASE_POOL_SIZE"],
  [{ DATABASE_STATEMENT_TIMEOUT: "soon" }, "DATABASE_STATEMENT_TIMEOUT"],
  [{ DATABASE_STATEMENT_TIMEOUT: "50ms" }, "DATABASE_STATEMENT_TIMEOUT"],
  [{ DATABASE_REQUEST_TIMEOUT: "0" }, "DATABASE_REQUEST_TIMEOUT"],
  [{ DATABASE_REQUEST_TIMEOUT: "1.5s" }, "DATABASE_REQUEST_TIMEOUT"],
  [{ S3_BUCKET: "b", S3_FORCE_PATH_STYLE: "maybe" }, "S3_FORCE_PATH_STYLE"],
  [{ INSTANCE_NAME: "x".repeat(81) }, "INSTANCE_NAME"],
  [{ INSTANCE_NAME: "two\nlines" }, "INSTANCE_NAME"],
];
for (const [env, name] of invalid) {
  test(`invalid ${name} stops start-up with a message naming it`, () => {
    expect(() => loadConfig({ DATA_DIR: dir(), ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dir(), ...env })).toThrow(name);
  });
}

test("database time limits: defaults, milliseconds or seconds, and 0 turns statement_timeout off", () => {
  const d = loadConfig({ DATA_DIR: dir() });
  expect([d.databaseStatementTimeoutMs, d.databaseRequestTimeoutMs]).toEqual([5000, 1500]);
  const set = loadConfig({ DATA_DIR: dir(), DATABASE_STATEMENT_TIMEOUT: "0", DATABASE_REQUEST_TIMEOUT: "800ms" });
  expect([set.databaseStatementTimeoutMs, set.databaseRequestTimeoutMs]).toEqual([0, 800]);
  expect(loadConfig({ DATA_DIR: dir(), DATABASE_STATEMENT_TIMEOUT: "2m" }).databaseStatementTimeoutMs).toBe(120_000);
  expect(loadConfig({ DATA_DIR: dir(), DATABASE_REQUEST_TIMEOUT: "2" }).databaseRequestTimeoutMs).toBe(2000);
});

test("the README's configuration table documents every variable", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");
  for (const name of CONFIG_VARIABLES) expect(readme).toContain(`| \`${name}\``);
});
