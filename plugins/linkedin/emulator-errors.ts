/** The LinkedIn emulator's errors, as LinkedIn writes them: `{status, serviceErrorCode, code, message}`. */
import type { FailureSpec } from "../../src/platform/sdk.ts";

export class LiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = "ERROR",
  ) {
    super(message);
  }
}

export const error = (status: number, message: string, code = "ERROR") =>
  Response.json({ status, serviceErrorCode: status * 100, code, message }, { status });

/**
 * Which LinkedIn-Version values LinkedIn serves (checked 2026-11-26): monthly YYYYMM versions
 * (learn.microsoft.com/en-us/linkedin/marketing/versioning: "supported and stable for a minimum of one
 * year before sunset"), each sunset about the middle of its month a year on (the migrations page lists
 * 202510 until October 15, 2026, 202511 until November 16, 2026, 202603 until March 16, 2027). A version
 * not yet released or already sunset is answered 426 NONEXISTENT_VERSION, "Requested version YYYYMMDD is
 * not active" (the answer LinkedIn's clients report, e.g. for 20250401 in April 2026).
 */
export function versionProblem(header: string | null, now: Date): LiError | null {
  if (!header)
    return new LiError(
      400,
      "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
      "VERSION_MISSING",
    );
  const m = /^(\d{4})(\d{2})(?:\.(\d{2}))?$/.exec(header);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12)
    return new LiError(400, `Invalid version ${header}; the version must be in the format YYYYMM`, "INVALID_VERSION");
  const released = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1));
  const sunset = new Date(Date.UTC(Number(m[1]) + 1, Number(m[2]) - 1, 15));
  if (now < released || now >= sunset)
    return new LiError(426, `Requested version ${m[1]}${m[2]}${m[3] ?? "01"} is not active`, "NONEXISTENT_VERSION");
  return null;
}

/** The answer of each failure a test asks for (FailurePlan). */
export function failureResponse(f: FailureSpec): Response | null {
  if (f.kind === "rate_limit")
    return new Response(
      JSON.stringify({ status: 429, code: "TOO_MANY_REQUESTS", message: "Resource level throttle limit reached" }),
      {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": String(f.retryAfterSeconds ?? 60) },
      },
    );
  if (f.kind === "server_error") return error(503, "Service unavailable", "SERVICE_UNAVAILABLE");
  if (f.kind === "auth_expired") return error(401, "The token used in the request has expired", "EXPIRED_ACCESS_TOKEN");
  if (f.kind === "forbidden") return error(403, "Not enough permissions to access this resource", "ACCESS_DENIED");
  return null;
}
