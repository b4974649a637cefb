/**
 * Stored secrets under two keys (issue 30 item 4): texts name their key, SECRET_KEY_PREVIOUS opens what
 * the old key made, signed links made with it verify until they expire, and a rotation moves accounts'
 * credentials and webhook endpoints' secrets to SECRET_KEY in batches, exactly once per row even with two
 * runs at once, leaving a row no key opens untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { ConfigError, loadConfig } from "../../src/config.ts";
import type { Db } from "../../src/db/client.ts";
import { decryptJson, encryptJson, keyId, UnknownSecretKey } from "../../src/db/crypto.ts";
import { accounts, profiles, webhookEndpoints } from "../../src/db/schema.ts";
import { rotateBatch, secretsReport, UnreadableSecrets } from "../../src/db/secret-rotation.ts";
import { issueState, verifyState } from "../../src/modules/connect/state.ts";
import { signUploadToken, verifyUploadToken } from "../../src/storage/upload-token.ts";
import { runCli } from "../support/cli.ts";
import { testDatabase } from "../support/db.ts";

const OLD = Buffer.from("old-secret-key-0123456789abcdef-0123456789");
const NEW = Buffer.from("new-secret-key-fedcba9876543210-9876543210");
const OTHER = Buffer.from("some-other-key-that-this-server-never-had-00");
const both = { secretKey: NEW, secretKeyPrevious: OLD };

/** A text in the format stored before key ids (v1), as servers wrote until this change. */
function v1(secret: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const key = createHash("sha256").update("crier/credentials/v1").update(secret).digest();
  const c = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([c.update(JSON.stringify(value), "utf8"), c.final()]);
  return ["v1", iv, c.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

describe("stored texts and their keys", () => {
  test("a text names its key; SECRET_KEY_PREVIOUS opens the old key's texts; an unknown key is named", () => {
    const text = encryptJson(OLD, { token: "t" });
    expect(text.startsWith(`v2.${keyId(OLD)}.`)).toBe(true);
    expect(keyId(OLD)).not.toBe(keyId(NEW));
    expect(decryptJson([NEW, OLD], text)).toEqual({ token: "t" });
    expect(() => decryptJson(NEW, text)).toThrow(UnknownSecretKey);
    expect(() => decryptJson(NEW, text)).toThrow(/SECRET_KEY_PREVIOUS/);
  });

  test("texts stored before key ids still open, with either key", () => {
    expect(decryptJson([NEW, OLD], v1(OLD, { a: 1 }))).toEqual({ a: 1 });
    expect(decryptJson([NEW, OLD], v1(NEW, { a: 2 }))).toEqual({ a: 2 });
    expect(() => decryptJson([NEW], v1(OLD, { a: 1 }))).toThrow(UnknownSecretKey);
  });

  test("SECRET_KEY_PREVIOUS is checked like SECRET_KEY", () => {
    const base = { DATA_DIR: mkdtempSync(join(tmpdir(), "crier-keys-")), SECRET_KEY: NEW.toString() };
    expect(loadConfig({ ...base, SECRET_KEY_PREVIOUS: OLD.toString() }).secretKeyPrevious).toEqual(OLD);
    expect(loadConfig(base).secretKeyPrevious).toBeUndefined();
    expect(() => loadConfig({ ...base, SECRET_KEY_PREVIOUS: "short" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SECRET_KEY_PREVIOUS: NEW.toString() })).toThrow(/same as SECRET_KEY/);
  });

  test("links signed with the old key verify with it as previous, until they expire", () => {
    const now = new Date("2026-11-26T00:00:00Z");
    const state = issueState(OLD, { profileId: "p", platform: "bluesky", sandbox: true }, now);
    const ok = verifyState([NEW, OLD], state, "bluesky", now);
    expect(ok.ok && ok.secret).toBe(OLD);
    expect(verifyState([NEW], state, "bluesky", now)).toEqual({ ok: false, reason: "invalid" });
    expect(verifyState([NEW, OLD], state, "bluesky", new Date(now.getTime() + 6 * 60_000))).toEqual({
      ok: false,
      reason: "expired",
    });
    const claims = { mediaId: "m", key: "k", contentType: "image/png", maxBytes: 5, exp: 1 };
    const upload = signUploadToken(OLD, claims);
    expect(verifyUploadToken([NEW, OLD], upload)).toEqual(claims);
    expect(verifyUploadToken([NEW], upload)).toBeNull();
  });
});

describe("rotation on the database", () => {
  let db: Db & { url?: string };
  let profileId: string;

  beforeAll(async () => {
    db = await testDatabase();
    [{ id: profileId }] = await db.db.insert(profiles).values({ name: "p" }).returning({ id: profiles.id });
  });
  afterAll(async () => {
    await db.close();
  });

  async function seed(n: number, make: (i: number) => string) {
    const rows = Array.from({ length: n }, (_, i) => ({
      profileId,
      platform: "bluesky",
      remoteId: `r-${Math.random()}`,
      username: `u${i}`,
      credentials: make(i),
    }));
    return (await db.db.insert(accounts).values(rows).returning({ id: accounts.id })).map((r) => r.id);
  }
  const clear = () => db.db.delete(accounts);

  test("batches move accounts and webhook secrets to SECRET_KEY, keep updated_at, and are resumable", async () => {
    await clear();
    await seed(5, (i) => (i % 2 ? encryptJson(OLD, { i }) : v1(OLD, { i })));
    const [hook] = await db.db
      .insert(webhookEndpoints)
      .values({
        profileId,
        url: "https://example.com/h",
        events: ["post.published"],
        secrets: encryptJson(OLD, { current: "whsec" }),
      })
      .returning();
    expect((await secretsReport(db, both)).to_rotate).toBe(6);

    expect(await rotateBatch(db, both, 4)).toEqual({ rotated: 4 });
    expect((await secretsReport(db, both)).to_rotate).toBe(2);
    expect(await rotateBatch(db, both, 4)).toEqual({ rotated: 2 });
    expect(await rotateBatch(db, both, 4)).toEqual({ rotated: 0 });
    const report = await secretsReport(db, both);
    expect(report).toMatchObject({ total: 6, to_rotate: 0, unreadable: [] });

    for (const r of await db.db.select().from(accounts)) {
      expect(r.credentials!.startsWith(`v2.${keyId(NEW)}.`)).toBe(true);
      expect(decryptJson(NEW, r.credentials!)).toEqual({ i: Number(r.username.slice(1)) });
    }
    const [after] = await db.db.select().from(webhookEndpoints);
    expect(decryptJson(NEW, after.secrets)).toEqual({ current: "whsec" });
    expect(after.updatedAt.toISOString()).toBe(hook.updatedAt.toISOString());
    await db.db.delete(webhookEndpoints);
  });

  test("a row no key opens stops the batch, which changes nothing, and is named", async () => {
    await clear();
    await seed(3, () => encryptJson(OLD, { fine: true }));
    const [foreign] = await seed(1, () => encryptJson(OTHER, { lost: true }));
    const before = await db.rows<{ id: string; credentials: string }>(
      sql`select id, credentials from accounts order by id`,
    );

    expect((await secretsReport(db, both)).unreadable).toEqual([{ kind: "account", id: foreign }]);
    const error = await rotateBatch(db, both, 100).catch((e) => e);
    expect(error).toBeInstanceOf(UnreadableSecrets);
    expect(error.message).toContain(foreign);
    expect(await db.rows(sql`select id, credentials from accounts order by id`)).toEqual(before);
  });

  test.if(!!process.env.TEST_DATABASE_URL)(
    "two `crier secrets rotate` at once re-encrypt each row exactly once",
    async () => {
      await clear();
      const ids = await seed(300, (i) => encryptJson(OLD, { i }));
      // Every write of a credential, counted by the database itself.
      await db.rows(sql`create table rotate_writes (id uuid not null)`);
      await db.rows(
        sql.raw(`create function count_rotate_write() returns trigger language plpgsql as $$
        begin insert into rotate_writes values (new.id); return null; end $$`),
      );
      await db.rows(
        sql`create trigger count_rotate_write after update of credentials on accounts for each row execute function count_rotate_write()`,
      );
      const env = {
        DATABASE_URL: db.url!,
        DATA_DIR: mkdtempSync(join(tmpdir(), "crier-rotate-")),
        SECRET_KEY: NEW.toString(),
        SECRET_KEY_PREVIOUS: OLD.toString(),
      };
      const [a, b] = await Promise.all([
        runCli(["secrets", "rotate", "--batch", "7"], env),
        runCli(["secrets", "rotate", "--batch", "7"], env),
      ]);
      expect([a.code, b.code]).toEqual([0, 0]);
      const done = (r: { lastLine: string }) => Number(/re-encrypted (\d+)/.exec(r.lastLine)![1]);
      expect(done(a) + done(b)).toBe(300);
      const writes = await db.rows<{ n: number; distinct: number }>(
        sql`select count(*)::int as n, count(distinct id)::int as distinct from rotate_writes`,
      );
      expect(writes[0]).toEqual({ n: 300, distinct: 300 });
      const rows = await db.db.select().from(accounts);
      expect(rows.length).toBe(ids.length);
      for (const r of rows) expect(decryptJson(NEW, r.credentials!)).toEqual({ i: Number(r.username.slice(1)) });
      expect(a.lastLine).toContain("SECRET_KEY_PREVIOUS can be removed");
      expect(b.lastLine).toContain("SECRET_KEY_PREVIOUS can be removed");
    },
    60_000,
  );
});
