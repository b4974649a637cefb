import { createHash, randomBytes } from "node:crypto";

// Sandbox keys look different at a glance so nobody mistakes them for keys that reach real platforms.
export const LIVE_PREFIX = "crier_live_";
export const SANDBOX_PREFIX = "crier_sandbox_";
const TOKEN_SHAPE = /^crier_(live|sandbox)_[A-Za-z0-9_-]{43}$/;

export function newToken(sandbox: boolean): string {
  return (sandbox ? SANDBOX_PREFIX : LIVE_PREFIX) + randomBytes(32).toString("base64url");
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The part of a token safe to show in lists: its kind and four characters of the secret. */
export function publicPrefix(token: string): string {
  const kind = token.startsWith(SANDBOX_PREFIX) ? SANDBOX_PREFIX : LIVE_PREFIX;
  return token.slice(0, kind.length + 4);
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}
