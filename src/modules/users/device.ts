import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { secretKeys } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { readCookie } from "../../http/session.ts";

/**
 * The device cookie: a browser that signed in to an account once carries a random id signed (HMAC with
 * SECRET_KEY) together with that account's email. The sign-in throttle counts such a browser's attempts
 * apart from the account's, so guesses from elsewhere cannot lock the user out of their own browser.
 * It grants nothing else: the password is still checked, and a forged or another account's cookie
 * simply counts as no cookie.
 */
export const DEVICE_COOKIE = "crier_device";
const DEVICE_MAX_AGE_SECONDS = 365 * 24 * 3600;

function mac(secret: Buffer, email: string, id: string) {
  return createHmac("sha256", secret)
    .update(`sign-in-device\n${email.trim().toLowerCase()}\n${id}`)
    .digest("base64url");
}

/** The id of the request's device cookie when it was issued for this email; undefined otherwise. */
export function knownDevice(ctx: AppContext, request: Request, email: string): string | undefined {
  const [id, signature] = (readCookie(request, DEVICE_COOKIE) ?? "").split(".");
  if (!id || !signature || !/^[A-Za-z0-9_-]{16,64}$/.test(id)) return undefined;
  const given = Buffer.from(signature);
  // Cookies signed before a change of SECRET_KEY count while SECRET_KEY_PREVIOUS is set.
  const signedBy = (secret: Buffer) => {
    const expected = Buffer.from(mac(secret, email, id));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return secretKeys(ctx.config).some(signedBy) ? id : undefined;
}

/** The Set-Cookie value marking this browser as one `email` signed in from (keeping its id if it had one). */
export function deviceCookie(ctx: AppContext, email: string, id = randomBytes(16).toString("base64url")): string {
  const secure = ctx.config.publicUrl.startsWith("https:") ? "; Secure" : "";
  return `${DEVICE_COOKIE}=${id}.${mac(ctx.config.secretKey, email, id)}; Path=/auth; HttpOnly; SameSite=Strict; Max-Age=${DEVICE_MAX_AGE_SECONDS}${secure}`;
}
