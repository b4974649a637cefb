import type { AppContext } from "../context.ts";
import { findSession, type Session } from "../modules/users/service.ts";
import { CsrfRefused, NotSignedIn } from "./errors.ts";

export const SESSION_COOKIE = "crier_session";
export const CSRF_HEADER = "x-csrf-token";

export function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/** The session cookie: never readable by scripts, not sent on cross-site subrequests, https-only when served so. */
export function sessionCookie(ctx: AppContext, token: string, maxAgeSeconds: number): string {
  const secure = ctx.config.publicUrl.startsWith("https:") ? "; Secure" : "";
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/**
 * A browser always names the page's origin on cross-site writes: one that is neither PUBLIC_URL nor the
 * host the request was sent to comes from another site's page.
 */
export function checkOrigin(ctx: AppContext, request: Request) {
  const origin = request.headers.get("origin");
  if (!origin) return;
  const own = [new URL(ctx.config.publicUrl).origin, new URL(request.url).origin];
  if (!own.includes(origin)) throw new CsrfRefused(`Requests from ${origin} may not use this session.`);
}

/**
 * The session of the cookie, checked against Origin and the CSRF token (`csrf: false` only for the read
 * that hands the page its token); throws when any of them fails.
 */
export async function requireSession(ctx: AppContext, request: Request, opts = { csrf: true }): Promise<Session> {
  const token = readCookie(request, SESSION_COOKIE);
  if (!token) throw new NotSignedIn();
  const session = await findSession(ctx.db, token, ctx.clock.now());
  if (!session) throw new NotSignedIn();
  if (!opts.csrf) return session;
  checkOrigin(ctx, request);
  if (request.headers.get(CSRF_HEADER) !== session.csrfToken)
    throw new CsrfRefused("The request lacks this session's CSRF token.");
  return session;
}
