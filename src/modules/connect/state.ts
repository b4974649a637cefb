/**
 * The signed state of a connect flow: which profile started it, for which platform, whether the profile
 * is a sandbox, and until when. It travels through the browser (OAuth state parameter, hosted page URL),
 * so it is HMAC-signed with the server secret. Only its nonce is stored, once it is used (used-states.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { decryptJson, encryptJson } from "../../db/crypto.ts";

export const STATE_TTL_MS = 5 * 60_000;

export interface ConnectState {
  profileId: string;
  platform: string;
  sandbox: boolean;
  expiresAt: number;
  nonce: string;
  /**
   * What an OAuth flow's hosted question resolved to (Mastodon: the server and the app registered
   * there), encrypted with SECRET_KEY: the state travels through the browser and the provider.
   */
  carry?: Record<string, string>;
}

const stateKey = (secret: Buffer) => createHash("sha256").update("crier/connect-state/v1").update(secret).digest();

function sign(secret: Buffer, payload: string): string {
  return createHmac("sha256", stateKey(secret)).update(payload).digest("base64url");
}

export function issueState(
  secret: Buffer,
  input: { profileId: string; platform: string; sandbox: boolean },
  now: Date,
): string {
  const state: ConnectState = {
    ...input,
    expiresAt: now.getTime() + STATE_TTL_MS,
    nonce: randomBytes(12).toString("base64url"),
  };
  const payload = Buffer.from(
    JSON.stringify([state.profileId, state.platform, state.sandbox ? 1 : 0, state.expiresAt, state.nonce]),
  ).toString("base64url");
  return `${payload}.${sign(secret, payload)}`;
}

/**
 * The same attempt (profile, nonce, expiry) with a carry added: the state an OAuth flow with a hosted
 * question sends to the provider once the user answered. It is spent like the first, by its nonce.
 */
export function stateWithCarry(secret: Buffer, state: ConnectState, carry: Record<string, string>): string {
  const payload = Buffer.from(
    JSON.stringify([
      state.profileId,
      state.platform,
      state.sandbox ? 1 : 0,
      state.expiresAt,
      state.nonce,
      encryptJson(secret, carry),
    ]),
  ).toString("base64url");
  return `${payload}.${sign(secret, payload)}`;
}

/**
 * `secret` is the key that signed the state: the flow's PKCE verifier, attempt secret and carried values
 * are derived from that same key, so a flow begun before SECRET_KEY changed finishes after it.
 */
export type StateCheck =
  { ok: true; state: ConnectState; secret: Buffer } | { ok: false; reason: "invalid" | "expired" | "wrong_platform" };

/** Checks a state against SECRET_KEY and SECRET_KEY_PREVIOUS (states live minutes, rotations longer). */
export function verifyState(
  secrets: Buffer | readonly Buffer[],
  token: string | undefined,
  platform: string,
  now: Date,
): StateCheck {
  const [payload, mac, extra] = (token ?? "").split(".");
  if (!payload || !mac || extra !== undefined) return { ok: false, reason: "invalid" };
  const given = Buffer.from(mac);
  const secret = (Array.isArray(secrets) ? (secrets as readonly Buffer[]) : [secrets as Buffer]).find((s) => {
    const expected = Buffer.from(sign(s, payload));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!secret) return { ok: false, reason: "invalid" };
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (!Array.isArray(fields) || (fields.length !== 5 && fields.length !== 6)) return { ok: false, reason: "invalid" };
  const [profileId, statePlatform, sandbox, expiresAt, nonce, sealed] = fields as [
    string,
    string,
    number,
    number,
    string,
    string | undefined,
  ];
  if (statePlatform !== platform) return { ok: false, reason: "wrong_platform" };
  if (typeof expiresAt !== "number" || now.getTime() > expiresAt) return { ok: false, reason: "expired" };
  let carry: Record<string, string> | undefined;
  if (sealed !== undefined) {
    try {
      carry = decryptJson<Record<string, string>>(secret, String(sealed));
    } catch {
      return { ok: false, reason: "invalid" };
    }
  }
  const state: ConnectState = { profileId, platform: statePlatform, sandbox: sandbox === 1, expiresAt, nonce };
  return { ok: true, state: carry ? { ...state, carry } : state, secret };
}

/** The PKCE verifier of a flow: derived from its state, so nothing needs to be stored between the two legs. */
export function codeVerifier(secret: Buffer, state: string): string {
  return createHmac("sha256", stateKey(secret)).update(`pkce:${state}`).digest("base64url");
}

/**
 * The secret of one connect attempt that hosted flows derive one-time codes from: stable for the state
 * (every showing of its page and its submission agree), unguessable without the server secret, and
 * different for every state, so a code shown for one attempt proves nothing for another.
 */
export function attemptSecret(secret: Buffer, state: ConnectState): string {
  return createHmac("sha256", stateKey(secret)).update(`attempt:${state.nonce}`).digest("base64url");
}
