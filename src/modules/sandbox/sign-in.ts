/**
 * Signing a browser in to the sandbox inbox without an API key in any address or cookie. The link
 * `crier keys create` (or `crier keys inbox-link`) prints names a key by id and is signed with the
 * server secret; it works once (its nonce is recorded like a used connect state) and for
 * INBOX_LINK_TTL_MS. It becomes an HttpOnly cookie, signed too, that names the same key: every inbox
 * request checks that key again, so revoking or expiring it ends the session.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, isNull, lt } from "drizzle-orm";
import type { Config } from "../../config.ts";
import type { Db } from "../../db/client.ts";
import { apiKeys, connectStatesUsed, profiles } from "../../db/schema.ts";
import type { Scope } from "../../http/scopes.ts";
import type { Principal } from "../keys/service.ts";

export const INBOX_LINK_TTL_MS = 15 * 60_000;
/** How long a browser stays signed in to the inbox (never past the key's own expiry or revocation). */
export const INBOX_SESSION_TTL_MS = 7 * 24 * 3600_000;

const signingKey = (secret: Buffer, purpose: string) =>
  createHash("sha256").update(`crier/sandbox-inbox/${purpose}/v1`).update(secret).digest();

function seal(secret: Buffer, purpose: string, fields: unknown[]): string {
  const payload = Buffer.from(JSON.stringify(fields)).toString("base64url");
  const mac = createHmac("sha256", signingKey(secret, purpose)).update(payload).digest("base64url");
  return `${payload}.${mac}`;
}

/** The fields when one of `secrets` (SECRET_KEY, or SECRET_KEY_PREVIOUS for what predates a rotation) sealed them. */
function open(secrets: readonly Buffer[], purpose: string, token: string): unknown[] | null {
  const [payload, mac, extra] = token.split(".");
  if (!payload || !mac || extra !== undefined) return null;
  const given = Buffer.from(mac);
  const sealedBy = (secret: Buffer) => {
    const expected = Buffer.from(createHmac("sha256", signingKey(secret, purpose)).update(payload).digest("base64url"));
    return expected.length === given.length && timingSafeEqual(expected, given);
  };
  if (!secrets.some(sealedBy)) return null;
  try {
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    return Array.isArray(fields) ? fields : null;
  } catch {
    return null;
  }
}

/** The one-time sign-in link for a sandbox key (by id), valid INBOX_LINK_TTL_MS from `now`. */
export function inboxLink(config: Config, keyId: string, now: Date): string {
  const token = seal(config.secretKey, "link", [
    keyId,
    now.getTime() + INBOX_LINK_TTL_MS,
    randomBytes(12).toString("base64url"),
  ]);
  return `${config.publicUrl.replace(/\/+$/, "")}/sandbox?sign_in=${token}`;
}

/** Spends a sign-in link: the key id it names, or null when it is forged, expired or was used before. */
export async function redeemInboxLink(
  db: Db,
  secrets: readonly Buffer[],
  token: string,
  now: Date,
): Promise<string | null> {
  const fields = open(secrets, "link", token);
  if (!fields || fields.length !== 3) return null;
  const [keyId, expiresAt, nonce] = fields as [unknown, unknown, unknown];
  if (typeof keyId !== "string" || typeof nonce !== "string" || typeof expiresAt !== "number") return null;
  if (now.getTime() > expiresAt) return null;
  // The nonces of used connect states and sign-in links share one table, each kept until it would have
  // expired anyway; the prefix keeps the two kinds apart.
  await db.db.delete(connectStatesUsed).where(lt(connectStatesUsed.expiresAt, now));
  const spent = await db.db
    .insert(connectStatesUsed)
    .values({ nonce: `inbox:${nonce}`, expiresAt: new Date(expiresAt) })
    .onConflictDoNothing()
    .returning({ nonce: connectStatesUsed.nonce });
  return spent.length === 1 ? keyId : null;
}

/** The cookie value of an inbox session for the key. */
export function inboxSession(secret: Buffer, keyId: string, now: Date): string {
  return seal(secret, "session", [keyId, now.getTime() + INBOX_SESSION_TTL_MS]);
}

/** The key an inbox session cookie names, or null when it is forged or over. */
export function sessionKey(secrets: readonly Buffer[], cookie: string, now: Date): string | null {
  const fields = open(secrets, "session", cookie);
  if (!fields || fields.length !== 2) return null;
  const [keyId, expiresAt] = fields as [unknown, unknown];
  if (typeof keyId !== "string" || typeof expiresAt !== "number" || now.getTime() > expiresAt) return null;
  return keyId;
}

/** The key by id as a principal, or null when it does not exist, is revoked or has expired. */
export async function principalById(db: Db, keyId: string, now: Date): Promise<Principal | null> {
  if (!/^[0-9a-f-]{36}$/i.test(keyId)) return null;
  const [row] = await db.db
    .select({ key: apiKeys, sandbox: profiles.sandbox })
    .from(apiKeys)
    .innerJoin(profiles, eq(profiles.id, apiKeys.profileId))
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  if (!row || (row.key.expiresAt && row.key.expiresAt <= now)) return null;
  return { keyId: row.key.id, profileId: row.key.profileId, sandbox: row.sandbox, scopes: row.key.scopes as Scope[] };
}
