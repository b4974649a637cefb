import { createHmac, timingSafeEqual } from "node:crypto";

/** What an fs upload token grants: one PUT of this content type, at most maxBytes, to this key, until exp. */
export interface UploadClaims {
  mediaId: string;
  key: string;
  contentType: string;
  maxBytes: number;
  /** Unix seconds. */
  exp: number;
}

// A key of its own, derived from SECRET_KEY, so an upload token can never be confused with anything
// else signed with the same secret.
const signingKey = (secret: Buffer) => createHmac("sha256", secret).update("crier upload token v1").digest();

const mac = (secret: Buffer, payload: string) => createHmac("sha256", signingKey(secret)).update(payload).digest();

export function signUploadToken(secret: Buffer, claims: UploadClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      m: claims.mediaId,
      k: claims.key,
      c: claims.contentType,
      n: claims.maxBytes,
      e: claims.exp,
    }),
  ).toString("base64url");
  return `${payload}.${mac(secret, payload).toString("base64url")}`;
}

/**
 * The claims when the token was made with one of these secrets (SECRET_KEY, or SECRET_KEY_PREVIOUS for
 * tokens made before a rotation) and not altered; null otherwise. Expiry is the caller's check.
 */
export function verifyUploadToken(secrets: Buffer | readonly Buffer[], token: string): UploadClaims | null {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const given = Buffer.from(m[2], "base64url");
  const signedBy = (secret: Buffer) => {
    const expected = mac(secret, m[1]);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!(Array.isArray(secrets) ? (secrets as readonly Buffer[]) : [secrets as Buffer]).some(signedBy)) return null;
  try {
    const p = JSON.parse(Buffer.from(m[1], "base64url").toString("utf8"));
    if (
      typeof p.m !== "string" ||
      typeof p.k !== "string" ||
      typeof p.c !== "string" ||
      !Number.isSafeInteger(p.n) ||
      !Number.isSafeInteger(p.e)
    )
      return null;
    return { mediaId: p.m, key: p.k, contentType: p.c, maxBytes: p.n, exp: p.e };
  } catch {
    return null;
  }
}
