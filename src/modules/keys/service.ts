import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { apiKeys, profiles } from "../../db/schema.ts";
import { prepared } from "../../db/prepared.ts";
import { isScope, SCOPES, type Scope } from "../../http/scopes.ts";
import { hashToken, looksLikeToken, newToken, publicPrefix } from "./tokens.ts";
import { principalCache } from "./principal-cache.ts";

export interface Principal {
  keyId: string;
  profileId: string;
  sandbox: boolean;
  scopes: Scope[];
}

export class KeyInputError extends Error {}

export function parseScopes(list: string): Scope[] {
  if (list.trim() === "all") return [...SCOPES];
  const items = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new KeyInputError("--scopes needs at least one scope, or 'all'");
  for (const s of items) {
    if (!isScope(s)) throw new KeyInputError(`unknown scope '${s}'; known scopes: ${SCOPES.join(", ")}`);
  }
  return [...new Set(items)] as Scope[];
}

export async function createProfile(db: Db, name: string, sandbox = false) {
  const [row] = await db.db.insert(profiles).values({ name, sandbox }).returning();
  return row;
}

export async function listProfiles(db: Db) {
  return db.db.select().from(profiles).orderBy(asc(profiles.createdAt), asc(profiles.id));
}

export async function findProfile(db: Db, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await db.db.select().from(profiles).where(eq(profiles.id, id));
  return row;
}

/** The profile named `default`, created on first use, for keys made without --profile. */
export async function defaultProfile(db: Db) {
  const [existing] = await db.db
    .select()
    .from(profiles)
    .where(eq(profiles.name, "default"))
    .orderBy(asc(profiles.createdAt))
    .limit(1);
  return existing ?? createProfile(db, "default");
}

export async function createKey(
  db: Db,
  input: { name: string; profileId?: string; scopes: Scope[]; expiresAt?: Date | null },
) {
  const profile = input.profileId ? await findProfile(db, input.profileId) : await defaultProfile(db);
  if (!profile) throw new KeyInputError(`no profile with id ${input.profileId}`);
  const token = newToken(profile.sandbox);
  const [row] = await db.db
    .insert(apiKeys)
    .values({
      profileId: profile.id,
      name: input.name,
      prefix: publicPrefix(token),
      hash: hashToken(token),
      scopes: input.scopes,
      expiresAt: input.expiresAt ?? null,
    })
    .returning();
  return { key: publicKey(row), token };
}

export async function listKeys(db: Db, profileId?: string) {
  const rows = await db.db
    .select()
    .from(apiKeys)
    .where(profileId ? eq(apiKeys.profileId, profileId) : undefined)
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map(publicKey);
}

export async function revokeKey(db: Db, id: string, now = new Date()) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new KeyInputError(`no key with id ${id}`);
  const [row] = await db.db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning();
  if (row) {
    // This copy refuses the key on its next request; other copies hear of it from the table's trigger.
    principalCache(db).forget(row.hash);
    return publicKey(row);
  }
  const [existing] = await db.db.select().from(apiKeys).where(eq(apiKeys.id, id));
  if (!existing) throw new KeyInputError(`no key with id ${id}`);
  return publicKey(existing);
}

const keyByHash = prepared((d) =>
  d
    .select({ key: apiKeys, sandbox: profiles.sandbox })
    .from(apiKeys)
    .innerJoin(profiles, eq(profiles.id, apiKeys.profileId))
    .where(eq(apiKeys.hash, sql.placeholder("hash")))
    .prepare("crier_key_by_hash"),
);

const STAMP_EVERY_MS = 60_000;

/**
 * Requests in flight together miss the cache together and all read the old stamp. A plain UPDATE made each
 * wait for the row lock and the commit of the one before it: under wrk -c10 ten commits in a row once a
 * minute, half a second of every request's time on a busy disk (the growth bench's GET /v1/accounts tail).
 * Skipping a row another request is stamping, or one stamped meanwhile, leaves one write and no waiting.
 */
async function stampLastUse(db: Db, id: string, now: Date) {
  const since = new Date(now.getTime() - STAMP_EVERY_MS).toISOString();
  await db.rows(sql`
    update api_keys set last_used_at = ${now.toISOString()}::timestamptz
    where id = (select id from api_keys where id = ${id}::uuid
      and (last_used_at is null or last_used_at < ${since}::timestamptz) for update skip locked)`);
}

/**
 * Resolves a bearer token to its principal, or null when it is unknown, revoked or expired. A valid key
 * is remembered for a few seconds (principal-cache.ts): the lookup was one of a GET's two round trips.
 */
export async function authenticate(db: Db, token: string, now: Date): Promise<Principal | null> {
  if (!looksLikeToken(token)) return null;
  const hash = hashToken(token);
  const cache = principalCache<Principal>(db);
  const wall = Date.now();
  const hit = cache.get(hash, wall);
  if (hit) return hit.expiresAt && hit.expiresAt <= now ? null : hit.principal;
  const readAt = cache.version();
  const [row] = await keyByHash(db).execute({ hash });
  if (!row || row.key.revokedAt || (row.key.expiresAt && row.key.expiresAt <= now)) return null;
  // Last use is shown to the minute: one write per key per minute keeps the hot path a read (and a cached
  // key, which skips this lookup altogether, costs nothing).
  if (!row.key.lastUsedAt || now.getTime() - row.key.lastUsedAt.getTime() > STAMP_EVERY_MS)
    await stampLastUse(db, row.key.id, now);
  const principal = {
    keyId: row.key.id,
    profileId: row.key.profileId,
    sandbox: row.sandbox,
    scopes: row.key.scopes as Scope[],
  };
  cache.set(hash, { principal, expiresAt: row.key.expiresAt }, wall, readAt);
  return principal;
}

function publicKey(row: typeof apiKeys.$inferSelect) {
  return {
    id: row.id,
    profile_id: row.profileId,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}
