/**
 * Google's error answers as outcomes. The Business Profile APIs answer google.rpc.Status
 * (`{error: {code, message, status, details}}`); a refused local post carries a
 * google.mybusiness.v4.ValidationError whose errorDetails name the field and an ErrorCode
 * (developers.google.com/my-business/reference/rest/Shared.Types/ValidationError and .../ErrorCode,
 * checked 2026-11-26); a token without the scope is 403 PERMISSION_DENIED with the reason
 * ACCESS_TOKEN_SCOPE_INSUFFICIENT; quota is 429 RESOURCE_EXHAUSTED.
 */
import { parseRetryAfter } from "../../src/platform/retry-after.ts";
import type { FailureOutcome, ProviderResponse } from "../../src/platform/sdk.ts";
import { ERROR_CODES, type ErrorBody } from "./contract.ts";

const codeName = (code: number | undefined) =>
  (Object.entries(ERROR_CODES).find(([, n]) => n === code)?.[0] ?? "invalid_argument").toLowerCase();

export function classifyGoogle(res: ProviderResponse): FailureOutcome | undefined {
  const e = (res.body as Partial<ErrorBody> | null)?.error;
  if (!e || typeof e !== "object") return undefined;
  const message = e.message ?? `HTTP ${res.status}`;
  if (res.status === 429 || e.status === "RESOURCE_EXHAUSTED")
    return {
      kind: "retryable",
      reason: `rate limited: ${message}`,
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), new Date()) ?? 60_000,
    };
  if (res.status === 403) {
    const scope =
      e.details?.some((d) => d.reason === "ACCESS_TOKEN_SCOPE_INSUFFICIENT") ||
      /insufficient authentication scopes/i.test(message);
    return scope
      ? {
          kind: "permanent",
          reason: `${message} Connect the location again and allow managing your Business Profile.`,
          code: "insufficient_scope",
        }
      : { kind: "permanent", reason: message, code: "permission_denied" };
  }
  const detail = e.details?.flatMap((d) => d.errorDetails ?? [])[0];
  if (res.status === 400 && detail)
    return {
      kind: "permanent",
      reason: `${detail.field ? `${detail.field}: ` : ""}${detail.message ?? message}`,
      code: codeName(detail.code),
    };
  if (res.status === 404) return { kind: "permanent", reason: message, code: "not_found" };
  return undefined;
}
