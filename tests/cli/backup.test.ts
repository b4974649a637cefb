/**
 * `crier backup` and `crier restore` on real `crier serve` processes: a backup taken while 100 posts are
 * being created and published restores to a server where each post is absent or whole, and that server
 * publishes with the restored (still encrypted) credentials; a wrong key, a damaged archive and a full
 * DATA_DIR are refused leaving DATA_DIR as it was. On PostgreSQL the archive holds the media only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/db/client.ts";
import { readTar } from "../../src/db/tar.ts";
import { runCli, startServe, type ServeProcess } from "../support/cli.ts";
import { submitHostedForm } from "../support/connect-kit.ts";
import { testDatabase } from "../support/db.ts";
import { makePng } from "../support/media-fixtures.ts";

const SECRET_KEY = "backup-test-secret-key-0123456789abcdef";
const onPostgres = !!process.env.TEST_DATABASE_URL;
const scratch = mkdtempSync(join(tmpdir(), "crier-backup-"));
let port: number;
let url: string;

beforeAll(async () => {
  // One address for every server of the file, as behind a fixed PUBLIC_URL (sandbox accounts keep using it).
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  port = probe.port!;
  await probe.stop(true);
  url = `http://127.0.0.1:${port}`;
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const envFor = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  SECRET_KEY,
  PORT: String(port),
  PUBLIC_URL: url,
  WEBHOOK_ALLOW_PRIVATE: "true",
  ...extra,
});

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The entries of a backup archive and its parsed manifest. */
async function entries(file: string) {
  const out = new Map<string, Uint8Array>();
  for await (const e of readTar(Bun.file(file).stream())) out.set(e.path, await new Response(toStream(e.body)).bytes());
  return { files: out, manifest: JSON.parse(new TextDecoder().decode(out.get("manifest.json")!)) };
}

function toStream(body: AsyncIterable<Uint8Array>) {
  return new ReadableStream<Uint8Array>({
    async start(c) {
      for await (const piece of body) c.enqueue(piece.slice());
      c.close();
    },
  });
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(onPostgres)("the embedded database", () => {
  const source = join(scratch, "source");
  const archive = join(scratch, "live.tar");
  let token: string;
  let server: ServeProcess | undefined;
  let accountIds: string[];
  let before: string[] = [];
  const created: string[] = [];
  let png: Uint8Array<ArrayBuffer>;
  let mediaPath: string;

  afterAll(async () => {
    await server?.stop();
  });

  test("a backup taken while 100 posts are created and published restores each post whole or not at all; the restored server publishes", async () => {
    const profile = await runCli(["profiles", "create", "--name", "live", "--sandbox"], envFor(source));
    token = (await runCli(["keys", "create", "--name", "k", "--profile", profile.lastLine], envFor(source))).lastLine;
    server = await startServe(envFor(source));
    for (const platform of ["bluesky", "telegram"]) {
      const res = await call(token, "POST", `/v1/accounts/connect/${platform}`);
      expect((await submitHostedForm(res.body.data.hosted_url)).html).toContain("Account connected");
    }
    const accounts = (await call(token, "GET", "/v1/accounts")).body.data as { id: string; platform: string }[];
    accountIds = accounts.map((a) => a.id);
    const byPlatform = (p: string) => accounts.find((a) => a.platform === p)!.id;
    const workflow = await call(token, "POST", "/v1/workflows", {
      name: "copy",
      source_account_id: byPlatform("bluesky"),
      target_account_ids: [byPlatform("telegram")],
      is_active: false,
    });
    expect(workflow.status).toBe(201);
    const hook = await call(token, "POST", "/v1/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["post.published"],
    });
    expect(hook.status).toBe(201);
    png = makePng(4, 3);
    const ticket = (await call(token, "POST", "/v1/media/uploads", { filename: "a.png", content_type: "image/png" }))
      .body.data;
    expect(
      (
        await fetch(ticket.upload.signedUrl, {
          method: "PUT",
          body: png,
          headers: { "content-type": "image/png" },
        })
      ).ok,
    ).toBe(true);
    mediaPath = ticket.path;

    // 100 posts published now, ten at a time; the backup starts once 30 have been answered.
    let next = 0;
    let backupStarted: Promise<Awaited<ReturnType<typeof runCli>>> | undefined;
    const worker = async () => {
      while (next < 100) {
        const n = next++;
        // Bluesky only: the Telegram emulator paces a channel at 20 messages a minute, as Telegram does.
        const res = await call(token, "POST", "/v1/posts", {
          content: `post ${n}`,
          targets: [{ account_id: byPlatform("bluesky") }],
        });
        expect(res.status).toBe(201);
        created.push(res.body.data.id);
        if (created.length === 30 && !backupStarted) {
          before = [...created];
          backupStarted = runCli(["backup", "--to", archive], envFor(source));
        }
      }
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    const backup = await backupStarted!;
    expect(backup.stderr).toContain("the API waited");
    expect(backup.code).toBe(0);
    expect(backup.lastLine).toBe(archive);
    expect(modeOf(archive)).toBe(0o600);
    await server.stop();
    server = undefined;

    const { files, manifest } = await entries(archive);
    expect([...files.keys()].sort()).toEqual(["manifest.json", `media/${mediaPath}`, "pglite.tar.gz"].sort());
    expect(manifest.database).toBe("pglite");
    expect(manifest.migration).toMatch(/^\d{4}_/);
    expect(manifest.counts.accounts).toBe(2);
    expect(manifest.counts.workflows).toBe(1);
    expect(manifest.counts.webhook_endpoints).toBe(1);
    // The key is never in the archive, in any form.
    const raw = readFileSync(archive);
    expect(raw.includes(Buffer.from(SECRET_KEY))).toBe(false);
    expect(files.has("secret.key")).toBe(false);

    const restored = join(scratch, "restored");
    const restore = await runCli(["restore", archive], envFor(restored));
    expect(restore.stderr).toContain("does not contain SECRET_KEY");
    expect(restore.stderr).toContain("opens the stored credentials");
    expect(restore.code).toBe(0);
    expect(modeOf(restored)).toBe(0o700);
    for (const e of readdirSync(restored, { recursive: true, withFileTypes: true }))
      if (e.isFile()) expect([e.name, modeOf(join(e.parentPath, e.name))]).toEqual([e.name, 0o600]);

    server = await startServe(envFor(restored));
    let present = 0;
    for (const id of created) {
      const got = await call(token, "GET", `/v1/posts/${id}`);
      if (got.status === 404) {
        // Absent: only a post answered after the backup began may be missing.
        expect(before).not.toContain(id);
        continue;
      }
      expect(got.status).toBe(200);
      present++;
      // Whole: the post with its target, and a target the backup saw published with the platform's id.
      const [target] = got.body.data.targets;
      expect(got.body.data.targets.length).toBe(1);
      expect(got.body.data.content).toStartWith("post ");
      if (target.status === "published") expect(target.platform_post_id).toBeString();
    }
    expect(present).toBeGreaterThanOrEqual(before.length);
    expect(present).toBe(manifest.counts.posts);

    expect((await call(token, "GET", "/v1/workflows")).body.data.length).toBe(1);
    expect((await call(token, "GET", "/v1/webhooks")).body.data.length).toBe(1);
    const restoredAccounts = (await call(token, "GET", "/v1/accounts")).body.data;
    expect(restoredAccounts.map((a: { status: string }) => a.status)).toEqual(["active", "active"]);
    expect(new Uint8Array(await (await fetch(`${url}/media/${mediaPath}`)).arrayBuffer())).toEqual(png);

    // Restore then publish: the restored credentials decrypt and the platform takes the post. (Telegram:
    // the Bluesky account's queue restarts behind the publish that was in flight when the backup was
    // taken, which the engine treats as after a crash.)
    const post = await call(token, "POST", "/v1/posts", {
      content: "after the restore",
      targets: [{ account_id: byPlatform("telegram") }],
    });
    expect(post.status).toBe(201);
    let settled: any;
    let last: any;
    for (let i = 0; i < 1200 && !settled; i++) {
      last = (await call(token, "GET", `/v1/posts/${post.body.data.id}`)).body.data;
      if (!["queued", "processing"].includes(last.status)) settled = last;
      else await Bun.sleep(50);
    }
    if (!settled) console.log(JSON.stringify(last));
    expect(settled?.targets.map((t: { status: string }) => t.status)).toEqual(["published"]);
    await server.stop();
    server = undefined;
  }, 240_000);

  test("a key that does not open the stored credentials is refused, and DATA_DIR is left as it was (here: not there)", async () => {
    const target = join(scratch, "wrong-key");
    const r = await runCli(
      ["restore", archive],
      envFor(target, { SECRET_KEY: "another-secret-key-0123456789abcdefgh" }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("does not open the credentials");
    expect(existsSync(target)).toBe(false);

    // Neither SECRET_KEY nor secret.key: refused, and no key is generated into DATA_DIR.
    const keyless = join(scratch, "keyless");
    const k = await runCli(["restore", archive], { ...envFor(keyless), SECRET_KEY: "" });
    expect(k.code).toBe(1);
    expect(k.stderr).toContain("neither SECRET_KEY nor DATA_DIR/secret.key");
    expect(existsSync(join(keyless, "secret.key"))).toBe(false);
    expect(existsSync(join(keyless, "pglite"))).toBe(false);

    // The generated key file copied into DATA_DIR is what a server without SECRET_KEY uses: accepted.
    mkdirSync(keyless, { recursive: true });
    writeFileSync(join(keyless, "secret.key"), `${SECRET_KEY}\n`, { mode: 0o600 });
    const ok = await runCli(["restore", archive], { ...envFor(keyless), SECRET_KEY: "" });
    expect(ok.stderr).toContain("opens the stored credentials");
    expect(ok.code).toBe(0);
  }, 120_000);

  test("a DATA_DIR that is not empty is refused without --force and replaced with it", async () => {
    const target = join(scratch, "full");
    await runCli(["profiles", "create", "--name", "other"], envFor(target));
    const refused = await runCli(["restore", archive], envFor(target));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not empty");
    expect((await runCli(["profiles", "list"], envFor(target))).stdout).toContain("other");

    const forced = await runCli(["restore", archive, "--force"], envFor(target));
    expect(forced.code).toBe(0);
    const list = (await runCli(["profiles", "list"], envFor(target))).stdout;
    expect(list).toContain("live");
    expect(list).not.toContain("other");
  }, 120_000);

  test("a damaged or cut archive is refused; a backup with no server running reads DATA_DIR", async () => {
    const offline = join(scratch, "offline.tar");
    const r = await runCli(["backup", "--to", offline], envFor(source));
    expect(r.code).toBe(0);
    const { manifest } = await entries(offline);
    expect(manifest.counts.posts).toBe(100);

    const bytes = readFileSync(offline);
    const damaged = join(scratch, "damaged.tar");
    bytes[2048] ^= 0xff; // inside pglite.tar.gz, which follows its 512-byte header
    writeFileSync(damaged, bytes);
    const bad = await runCli(["restore", damaged], envFor(join(scratch, "damaged")));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("checksum");
    expect(existsSync(join(scratch, "damaged"))).toBe(false);

    const cut = join(scratch, "cut.tar");
    writeFileSync(cut, readFileSync(offline).subarray(0, 100_000));
    const short = await runCli(["restore", cut], envFor(join(scratch, "cut")));
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("cut short");
  }, 120_000);
});

describe.skipIf(!onPostgres)("PostgreSQL", () => {
  let db: Db;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  test("backup says to use pg_dump and archives the media files only; restore puts them back", async () => {
    const dataDir = join(scratch, "pg");
    const env = envFor(dataDir, { DATABASE_URL: db.url! });
    mkdirSync(join(dataDir, "media"), { recursive: true, mode: 0o700 });
    const png = makePng(2, 2);
    writeFileSync(join(dataDir, "media", "med_AAAAAAAAAAAAAAAAAAAAAA.png"), png, { mode: 0o600 });
    const file = join(scratch, "pg.tar");
    const r = await runCli(["backup", "--to", file], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("pg_dump");
    const { files, manifest } = await entries(file);
    expect([...files.keys()].sort()).toEqual(["manifest.json", "media/med_AAAAAAAAAAAAAAAAAAAAAA.png"]);
    expect(manifest.database).toBe("postgres");

    const into = join(scratch, "pg-restored");
    const restored = await runCli(["restore", file], envFor(into, { DATABASE_URL: db.url! }));
    expect(restored.code).toBe(0);
    expect(restored.stderr).toContain("pg_restore");
    expect(new Uint8Array(readFileSync(join(into, "media", "med_AAAAAAAAAAAAAAAAAAAAAA.png")))).toEqual(png);

    // An archive of PostgreSQL's media is not an embedded database.
    const refused = await runCli(["restore", file], envFor(join(scratch, "pg-embedded")));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("pg_restore");
  }, 60_000);
});

test("--help of both commands says what they do, what is not in the archive, and their options", async () => {
  const backup = await runCli(["backup", "--help"], envFor(join(scratch, "help")));
  expect(backup.code).toBe(0);
  expect(backup.stdout).toContain("crier backup --to FILE");
  expect(backup.stdout).toContain("SECRET_KEY is never in the archive");
  expect(backup.stdout).toContain("pg_dump");
  const restore = await runCli(["restore", "--help"], envFor(join(scratch, "help")));
  expect(restore.code).toBe(0);
  expect(restore.stdout).toContain("crier restore FILE [--force]");
  expect(restore.stdout).toContain("--force");
  const missing = await runCli(["backup"], envFor(join(scratch, "help")));
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("--to FILE is required");
});
