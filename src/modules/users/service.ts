import { randomBytes } from "node:crypto";
import { and, asc, eq, gt, isNull, ne } from "drizzle-orm";
import type { Db, Queryable } from "../../db/client.ts";
import { profiles, sessions, signInLinks, userProfiles, users } from "../../db/schema.ts";
import { hashToken } from "../keys/tokens.ts";
import { defaultProfile, findProfile, createProfile } from "../keys/service.ts";
import { BadRequest, NotFound } from "../../http/errors.ts";
import { LinkInvalid, NotAMember, ProfileCreationForbidden, SignInFailed } from "./errors.ts";
import { passwordWork } from "./password-work.ts";

export const LINK_TTL_MS = 24 * 3600_000;
export const SESSION_TTL_MS = 14 * 24 * 3600_000;
export const MIN_PASSWORD_LENGTH = 10;

export class UserInputError extends Error {}

const normalEmail = (email: string) => email.trim().toLowerCase();
const secret = () => randomBytes(32).toString("base64url");

/** A hash to verify against when the address is unknown, so both answers take as long. */
let decoyHash: Promise<string> | undefined;

export async function findUserByEmail(db: Db, email: string) {
  const [row] = await db.db
    .select()
    .from(users)
    .where(eq(users.email, normalEmail(email)));
  return row;
}

/**
 * Creates the user (or finds the existing one), adds the profile to theirs, and returns a one-time
 * link valid 24 h on which they set a password.
 */
export async function createUser(db: Db, input: { email: string; profileId?: string }, now: Date) {
  const email = normalEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UserInputError(`"${input.email}" is not an email address`);
  const profile = input.profileId ? await findProfile(db, input.profileId) : await defaultProfile(db);
  if (!profile) throw new UserInputError(`no profile with id ${input.profileId}`);
  const user =
    (await findUserByEmail(db, email)) ??
    (await db.db
      .insert(users)
      .values({ email })
      .returning()
      .then((r) => r[0]));
  await db.db.insert(userProfiles).values({ userId: user.id, profileId: profile.id }).onConflictDoNothing();
  return { user, profile, link: await newLink(db, user.id, now) };
}

/** A new one-time link for an existing user; their password stays valid until the link is used. */
export async function resetPassword(db: Db, email: string, now: Date) {
  const user = await findUserByEmail(db, email);
  if (!user) throw new UserInputError(`no user with email ${email}`);
  return { user, link: await newLink(db, user.id, now) };
}

/**
 * A new link revokes the user's older unused ones: only the link an operator issued last may set the
 * password, so a welcome link forwarded or left in a mailbox dies when a reset replaces it.
 */
async function newLink(db: Db, userId: string, now: Date) {
  const token = secret();
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
  await db.db.transaction(async (tx) => {
    await revokeUnusedLinks(tx, userId, now);
    await tx.insert(signInLinks).values({ userId, tokenHash: hashToken(token), expiresAt });
  });
  return { token, expiresAt };
}

/** Marks every unused link of the user used (but `keep`), so none of them can set the password again. */
async function revokeUnusedLinks(db: Queryable, userId: string, now: Date, keep?: string) {
  await db
    .update(signInLinks)
    .set({ usedAt: now })
    .where(
      and(eq(signInLinks.userId, userId), isNull(signInLinks.usedAt), keep ? ne(signInLinks.id, keep) : undefined),
    );
}

export async function listUsers(db: Db) {
  return db.db
    .select({
      id: users.id,
      email: users.email,
      canCreateProfiles: users.canCreateProfiles,
      createdAt: users.createdAt,
    })
    .from(users)
    .orderBy(asc(users.email));
}

/** What an operator allows a user beyond their profiles (crier users set). */
export async function setUserRights(db: Db, email: string, rights: { canCreateProfiles: boolean }) {
  const [user] = await db.db
    .update(users)
    .set({ canCreateProfiles: rights.canCreateProfiles })
    .where(eq(users.email, normalEmail(email)))
    .returning();
  if (!user) throw new UserInputError(`no user with email ${email}`);
  return user;
}

async function usableLink(db: Db, token: string, now: Date) {
  const [row] = await db.db
    .select({ link: signInLinks, email: users.email })
    .from(signInLinks)
    .innerJoin(users, eq(users.id, signInLinks.userId))
    .where(eq(signInLinks.tokenHash, hashToken(token)));
  if (!row || row.link.usedAt || row.link.expiresAt <= now) throw new LinkInvalid();
  return row;
}

export async function describeLink(db: Db, token: string, now: Date) {
  const row = await usableLink(db, token, now);
  return { email: row.email, expires_at: row.link.expiresAt.toISOString() };
}

/** Sets the password from a one-time link (used once: a second use is refused) and opens a session. */
export async function redeemLink(db: Db, token: string, password: string, now: Date) {
  checkPassword(password);
  const row = await usableLink(db, token, now);
  const hash = await passwordWork.run(() => Bun.password.hash(password, { algorithm: "argon2id" }));
  await db.db.transaction(async (tx) => {
    const used = await tx
      .update(signInLinks)
      .set({ usedAt: now })
      .where(and(eq(signInLinks.id, row.link.id), isNull(signInLinks.usedAt)))
      .returning();
    if (used.length === 0) throw new LinkInvalid();
    // Any other link still open (issued before this one, or in a race with it) dies with this use.
    await revokeUnusedLinks(tx, row.link.userId, now, row.link.id);
    await tx.update(users).set({ passwordHash: hash }).where(eq(users.id, row.link.userId));
    // A new password ends every session opened with the old one.
    await tx.delete(sessions).where(eq(sessions.userId, row.link.userId));
  });
  return openSession(db, row.link.userId, now);
}

function checkPassword(password: string) {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new BadRequest(
      "weak_password",
      `The password is shorter than ${MIN_PASSWORD_LENGTH} characters.`,
      "Choose a longer password; a few unrelated words make a good one.",
    );
}

/** Checks email and password; null for any mismatch (unknown address, no password yet, wrong password). */
export async function verifyPassword(db: Db, email: string, password: string) {
  const user = await findUserByEmail(db, email);
  // Made once per process, outside the line: a refusal cached here would fail every later sign-in.
  decoyHash ??= Bun.password.hash(secret(), { algorithm: "argon2id" });
  const hash = user?.passwordHash ?? (await decoyHash);
  const ok = await passwordWork.run(() => Bun.password.verify(password, hash));
  return ok && user?.passwordHash ? user : null;
}

export async function signIn(db: Db, email: string, password: string, now: Date) {
  const user = await verifyPassword(db, email, password);
  if (!user) throw new SignInFailed();
  return openSession(db, user.id, now);
}

export async function memberProfiles(db: Db, userId: string) {
  return db.db
    .select({ id: profiles.id, name: profiles.name, sandbox: profiles.sandbox })
    .from(userProfiles)
    .innerJoin(profiles, eq(profiles.id, userProfiles.profileId))
    .where(eq(userProfiles.userId, userId))
    .orderBy(asc(profiles.createdAt), asc(profiles.id));
}

async function openSession(db: Db, userId: string, now: Date) {
  const [first] = await memberProfiles(db, userId);
  if (!first) throw new NotAMember();
  const token = secret();
  const [row] = await db.db
    .insert(sessions)
    .values({
      userId,
      profileId: first.id,
      tokenHash: hashToken(token),
      csrfToken: secret(),
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    })
    .returning();
  return { token, session: row };
}

export type Session = typeof sessions.$inferSelect & { sandbox: boolean };

/** The live session a cookie value names, with its profile's sandbox flag; null when unknown or expired. */
export async function findSession(db: Db, token: string, now: Date): Promise<Session | null> {
  const [row] = await db.db
    .select({ session: sessions, sandbox: profiles.sandbox })
    .from(sessions)
    .innerJoin(profiles, eq(profiles.id, sessions.profileId))
    .where(and(eq(sessions.tokenHash, hashToken(token)), gt(sessions.expiresAt, now)));
  return row ? { ...row.session, sandbox: row.sandbox } : null;
}

export async function endSession(db: Db, session: Session, everywhere: boolean) {
  await db.db.delete(sessions).where(everywhere ? eq(sessions.userId, session.userId) : eq(sessions.id, session.id));
}

/** What the page needs to render itself: who, where, and the CSRF token for its calls. */
export async function describeSession(db: Db, session: Session) {
  const [user] = await db.db.select().from(users).where(eq(users.id, session.userId));
  const list = await memberProfiles(db, session.userId);
  return {
    user: { id: user.id, email: user.email, can_create_profiles: user.canCreateProfiles },
    profile: list.find((p) => p.id === session.profileId) ?? list[0],
    profiles: list,
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt.toISOString(),
  };
}

export async function switchProfile(db: Db, session: Session, profileId: string) {
  const list = await memberProfiles(db, session.userId);
  if (!list.some((p) => p.id === profileId)) throw new NotFound("Profile", "not_found", "Pick one of your profiles.");
  await db.db.update(sessions).set({ profileId }).where(eq(sessions.id, session.id));
  return { ...session, profileId, sandbox: list.find((p) => p.id === profileId)!.sandbox };
}

/**
 * A new profile the user belongs to; the session switches to it. Only for users an operator granted the
 * right: a new profile has no limits (profiles set-limits), so adding profiles would sidestep them.
 */
export async function addProfile(db: Db, session: Session, name: string, sandbox: boolean) {
  const [user] = await db.db
    .select({ canCreateProfiles: users.canCreateProfiles })
    .from(users)
    .where(eq(users.id, session.userId));
  if (!user?.canCreateProfiles) throw new ProfileCreationForbidden();
  const profile = await createProfile(db, name, sandbox);
  await db.db.insert(userProfiles).values({ userId: session.userId, profileId: profile.id });
  return switchProfile(db, session, profile.id);
}
