import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startServe } from "../support/cli.ts";
import { testDatabase } from "../support/db.ts";
import type { Db } from "../../src/db/client.ts";

// With TEST_DATABASE_URL the commands run on a fresh PostgreSQL database; otherwise on an embedded
// database in a temporary DATA_DIR (where the lock and admin socket come into play).
let db: (Db & { url?: string }) | undefined;
let env: Record<string, string>;
const onPostgres = !!process.env.TEST_DATABASE_URL;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "crier-cli-"));
  env = { DATA_DIR: dataDir, SECRET_KEY: "cli-test-secret-key-0123456789abcdef" };
  if (onPostgres) {
    db = await testDatabase();
    env.DATABASE_URL = db.url!;
  }
});
afterAll(async () => {
  await db?.close();
});

describe("usage errors exit 2 with one line", () => {
  const cases: [string, string[]][] = [
    ["unknown command", ["frobnicate"]],
    ["unknown flag", ["keys", "create", "--name", "x", "--colour", "red"]],
    ["missing --name", ["keys", "create"]],
    ["unknown scope", ["keys", "create", "--name", "x", "--scopes", "posts:read,posts:delete"]],
    ["bad --expires-in", ["keys", "create", "--name", "x", "--expires-in", "soon"]],
    ["keys revoke without id", ["keys", "revoke"]],
    ["unknown profile", ["keys", "create", "--name", "x", "--profile", "3f1d0c9e-0000-4000-8000-000000000000"]],
  ];
  for (const [name, args] of cases) {
    test(name, async () => {
      const r = await runCli(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toStartWith("crier: ");
    });
  }
});

test("--help works on every command", async () => {
  for (const args of [
    ["--help"],
    ["serve", "--help"],
    ["accounts", "check", "--help"],
    ["migrate", "--help"],
    ["profiles", "create", "--help"],
    ["profiles", "list", "--help"],
    ["profiles", "set-limits", "--help"],
    ["keys", "create", "--help"],
    ["keys", "list", "--help"],
    ["keys", "revoke", "--help"],
    ["secrets", "rotate", "--help"],
  ]) {
    const r = await runCli(args, env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: crier");
  }
});

test("invalid configuration stops with one line naming the variable", async () => {
  const r = await runCli(["keys", "list"], { ...env, PORT: "lots" });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("PORT");
});

describe("keys and profiles", () => {
  test("keys create prints the token alone on the last line; it works against the API; keys list never shows it", async () => {
    const created = await runCli(
      ["keys", "create", "--name", "ci", "--scopes", "accounts:read,posts:read", "--expires-in", "30d"],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.lastLine).toMatch(/^crier_live_[A-Za-z0-9_-]{43}$/);
    const list = await runCli(["keys", "list"], env);
    expect(list.stdout).toContain("ci");
    expect(list.stdout).not.toContain(created.lastLine);
    expect(list.stdout).toContain(created.lastLine.slice(0, 15));

    const server = await startServe(env);
    try {
      const res = await fetch(`${server.url}/v1/accounts`, {
        headers: { authorization: `Bearer ${created.lastLine}` },
      });
      expect(res.status).toBe(200);
      const denied = await fetch(`${server.url}/v1/drafts`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.lastLine}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(denied.status).toBe(403);
    } finally {
      await server.stop();
    }
  });

  test("profiles create --sandbox prints the id last; its keys carry the sandbox prefix", async () => {
    const p = await runCli(["profiles", "create", "--name", "playground", "--sandbox"], env);
    expect(p.code).toBe(0);
    expect(p.lastLine).toMatch(/^[0-9a-f-]{36}$/);
    const k = await runCli(["keys", "create", "--name", "play", "--profile", p.lastLine], env);
    expect(k.lastLine).toStartWith("crier_sandbox_");
    const list = await runCli(["profiles", "list"], env);
    expect(list.stdout).toContain(p.lastLine);
    expect(list.stdout).toContain("playground");
  });

  test("profiles set-limits --workflows caps workflows (403 workflow_limit_reached); unlimited clears it", async () => {
    const p = (await runCli(["profiles", "create", "--name", "limited"], env)).lastLine;
    expect((await runCli(["profiles", "set-limits", p, "--workflows", "many"], env)).code).toBe(2);
    expect((await runCli(["profiles", "set-limits", "--workflows", "1"], env)).code).toBe(2);
    const set = await runCli(["profiles", "set-limits", p, "--workflows", "0"], env);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("workflows 0");
    const token = (await runCli(["keys", "create", "--name", "wf", "--profile", p], env)).lastLine;
    const server = await startServe(env);
    try {
      const body = JSON.stringify({
        name: "w",
        source_account_id: crypto.randomUUID(),
        target_account_ids: [crypto.randomUUID()],
        is_active: true,
      });
      const post = () =>
        fetch(`${server.url}/v1/workflows`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body,
        });
      const res = await post();
      expect(res.status).toBe(403);
      const err = (await res.json()).error;
      expect(err.code).toBe("workflow_limit_reached");
      expect(err.message).toContain("maximum of 0 workflows");
      expect((await runCli(["profiles", "set-limits", p, "--workflows", "unlimited"], env)).stdout).toContain(
        "workflows unlimited",
      );
      expect((await post()).status).toBe(400);
    } finally {
      await server.stop();
    }
  });

  test("profiles set-limits --accounts sets the account cap, shown by profiles list; a bad value is a usage error", async () => {
    const p = (await runCli(["profiles", "create", "--name", "capped"], env)).lastLine;
    expect((await runCli(["profiles", "set-limits", p, "--accounts", "-1"], env)).code).toBe(2);
    expect((await runCli(["profiles", "set-limits", p], env)).code).toBe(2);
    const set = await runCli(["profiles", "set-limits", p, "--accounts", "3"], env);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("accounts 3");
    const row = (await runCli(["profiles", "list"], env)).stdout.split("\n").find((l) => l.includes(p)) ?? "";
    expect(row).toContain(" 3 ");
    expect(row).toContain("unlimited");
  });

  test("accounts check: a table of every connected account, exit 0 when all can publish; --profile must be an id", async () => {
    expect((await runCli(["accounts", "check", "--profile", "nope"], env)).code).toBe(2);
    const r = await runCli(["accounts", "check"], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("(none)");
    const json = await runCli(["accounts", "check", "--json"], env);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  test("accounts check warns, without failing, when ffmpeg or ffprobe is missing and says what does not work", async () => {
    const found = await runCli(["accounts", "check"], env);
    expect(found.code).toBe(0);
    expect(found.stderr).not.toContain("warning:");
    const r = await runCli(["accounts", "check", "--json"], {
      ...env,
      FFMPEG_PATH: "/nonexistent/ffmpeg",
      FFPROBE_PATH: "/nonexistent/ffprobe",
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("warning: "));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("ffmpeg not found");
    expect(warnings[0]).toContain("FFMPEG_PATH");
    expect(warnings[0]).toContain("MOV/WebM → MP4");
    expect(warnings[0]).toContain("poster frames");
    expect(warnings[1]).toContain("FFPROBE_PATH");
    expect(warnings[1]).toContain("video facts");
  });

  test("commands work while the server runs, and revocation applies at once", async () => {
    const server = await startServe(env);
    try {
      const k = await runCli(["keys", "create", "--name", "live"], env);
      expect(k.code).toBe(0);
      const token = k.lastLine;
      expect((await fetch(`${server.url}/v1/accounts`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );
      const id = (await runCli(["keys", "list"], env)).stdout
        .split("\n")
        .find((l) => l.includes(" live "))!
        .split(/\s+/)[0];
      const revoked = await runCli(["keys", "revoke", id], env);
      expect(revoked.code).toBe(0);
      const res = await fetch(`${server.url}/v1/accounts`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      if (!onPostgres) expect(statSync(join(env.DATA_DIR, "admin.sock")).mode & 0o777).toBe(0o600);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("dashboard users", () => {
  const signIn = (url: string, email: string, password: string) =>
    fetch(`${url}/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
  const setPassword = (url: string, link: string, password: string) =>
    fetch(`${url}/auth/links/redeem`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: link.split("#")[1], password }),
    });

  test("users create prints a one-time link last; reset-password a new one; list shows users, never secrets", async () => {
    const created = await runCli(["users", "create", "--email", "Ada@Example.com"], env);
    expect(created.code).toBe(0);
    expect(created.lastLine).toMatch(/^http:\/\/127\.0\.0\.1:8080\/welcome#[A-Za-z0-9_-]{40,}$/);
    expect(created.stderr).toContain("ada@example.com");
    expect(created.stderr).toContain("usable once");
    for (const args of [
      ["users", "create"],
      ["users", "create", "--email", "not-an-address"],
      ["users", "reset-password", "--email", "nobody@example.com"],
    ]) {
      const r = await runCli(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }

    const server = await startServe(env);
    try {
      expect((await setPassword(server.url, created.lastLine, "first long password")).status).toBe(200);
      expect((await setPassword(server.url, created.lastLine, "another long password")).status).toBe(400);
      expect((await signIn(server.url, "ada@example.com", "first long password")).status).toBe(200);

      // While the server runs (through it, on the embedded database): a new link replaces the password once used.
      const reset = await runCli(["users", "reset-password", "--email", "ada@example.com"], env);
      expect(reset.code).toBe(0);
      expect(reset.lastLine).not.toBe(created.lastLine);
      expect((await signIn(server.url, "ada@example.com", "first long password")).status).toBe(200);
      expect((await setPassword(server.url, reset.lastLine, "second long password")).status).toBe(200);
      expect((await signIn(server.url, "ada@example.com", "first long password")).status).toBe(401);
      expect((await signIn(server.url, "ada@example.com", "second long password")).status).toBe(200);

      const profile = (await runCli(["profiles", "create", "--name", "team"], env)).lastLine;
      const bob = await runCli(["users", "create", "--email", "bob@example.com", "--profile", profile], env);
      expect(bob.code).toBe(0);
      expect(bob.stderr).toContain(profile);
      expect((await setPassword(server.url, bob.lastLine, "bobs long password")).status).toBe(200);
      const session = await signIn(server.url, "bob@example.com", "bobs long password");
      expect(((await session.json()) as any).data.profile.id).toBe(profile);

      const list = await runCli(["users", "list"], env);
      expect(list.code).toBe(0);
      const lines = list.stdout.split("\n");
      expect(lines.some((l) => l.includes("ada@example.com"))).toBe(true);
      expect(lines.some((l) => l.includes("bob@example.com"))).toBe(true);
      expect(list.stdout).not.toContain("Ada@Example.com");
      expect(list.stdout).not.toContain(bob.lastLine.split("#")[1]);
      expect(list.stdout).not.toContain("argon2");
      expect(lines[0]).toContain("CAN_CREATE_PROFILES");
      expect(lines.find((l) => l.includes("bob@example.com"))).toContain("false");

      // Creating profiles from the dashboard is granted per user, through the running server too.
      const granted = await runCli(
        ["users", "set", "--email", "bob@example.com", "--can-create-profiles", "true"],
        env,
      );
      expect(granted.code).toBe(0);
      expect(granted.stdout).toContain("can create profiles yes");
      const relisted = (await runCli(["users", "list"], env)).stdout.split("\n");
      expect(relisted.find((l) => l.includes("bob@example.com"))).toContain("true");
      for (const args of [
        ["users", "set", "--email", "bob@example.com", "--can-create-profiles", "maybe"],
        ["users", "set", "--email", "bob@example.com"],
        ["users", "set", "--email", "nobody@example.com", "--can-create-profiles", "true"],
      ]) {
        const r = await runCli(args, env);
        expect(r.code).toBe(2);
        expect(r.stderr.trim().split("\n")).toHaveLength(1);
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

test("a second serve on the same embedded database exits with a clear message", async () => {
  // The lock is a property of the embedded database, so this runs on one even in the PostgreSQL run.
  const embedded = { DATA_DIR: mkdtempSync(join(tmpdir(), "crier-lock-")), SECRET_KEY: env.SECRET_KEY };
  const server = await startServe(embedded);
  try {
    const second = await runCli(["serve"], { ...embedded, PORT: "0" });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("another Crier process");
    expect(second.stderr).toContain(String(server.proc.pid));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  } finally {
    await server.stop();
  }
});

test("migrate applies migrations and exits 0", async () => {
  const r = await runCli(["migrate"], env);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("migrations applied");
});

test("media cleanup runs directly and through the running server", async () => {
  const direct = await runCli(["media", "cleanup"], env);
  expect(direct.code).toBe(0);
  expect(direct.stdout).toMatch(/removed \d+ expired upload ticket\(s\)/);
  const server = await startServe(env, { args: ["--no-scheduler"] });
  try {
    const viaServer = await runCli(["media", "cleanup"], env);
    expect(viaServer.code).toBe(0);
    expect(viaServer.stdout).toMatch(/removed \d+ expired upload ticket\(s\)/);
  } finally {
    await server.stop();
  }
});
