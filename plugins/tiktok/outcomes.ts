/**
 * How TikTok's answers become outcomes: its error codes, and the notice a post carries when TikTok only
 * let it out privately (an app TikTok has not audited).
 */
import type { FailureOutcome, Outcome } from "../../src/platform/sdk.ts";

type Fail = FailureOutcome;

export const isFail = (v: unknown): v is Fail =>
  typeof v === "object" &&
  v !== null &&
  "kind" in v &&
  typeof (v as { kind: unknown }).kind === "string" &&
  "reason" in v;

/** TikTok's error for a direct post of an app it has not audited that is not SELF_ONLY. */
const UNAUDITED = "unaudited_client_can_only_post_to_private_accounts";

/** TikTok's error codes as outcomes ("Error Handling", developers.tiktok.com/doc/tiktok-api-v2-error-handling). */
export function classify(status: number, body: unknown): Fail | undefined {
  const err = (body as { error?: { code?: string; message?: string } } | null)?.error;
  const code = err?.code ?? "";
  const reason = `${code}: ${err?.message ?? `HTTP ${status}`}`;
  if (code === "access_token_invalid") return { kind: "auth_expired", reason };
  // A scope the user did not grant: a new token will not have it either; reconnecting and granting it will.
  if (code === "scope_not_authorized")
    return {
      kind: "permanent",
      reason: `${reason} Reconnect the TikTok account and allow every permission Crier asks for.`,
      code,
    };
  if (code === "rate_limit_exceeded" || status === 429) return { kind: "retryable", reason, retryAfterMs: 60_000 };
  // The creator's daily cap: worth trying again tomorrow, not sooner.
  if (code === "spam_risk_too_many_posts") return { kind: "retryable", reason, retryAfterMs: 6 * 3600_000 };
  if (code === "internal_error" || status >= 500) return { kind: "retryable", reason };
  if (code) return { kind: "permanent", reason, code };
  return undefined;
}

export type Notice = { code: string; message: string };

/** The notice of a post that went out SELF_ONLY because TikTok has not audited the app. */
export const PRIVATE_NOTICE: Notice = {
  code: "tiktok_private_unaudited",
  message:
    "Posted visible to the creator only (SELF_ONLY): TikTok allows only private posts from apps it has not audited. Have the TikTok app audited to post publicly.",
};

/**
 * An app TikTok has not audited may only post SELF_ONLY. When the client named no privacy, Crier's
 * default (public when offered) is refused for that reason only, so the post goes out SELF_ONLY instead
 * and the target says so; a privacy the client asked for is never changed behind its back.
 */
export async function unauditedFallback<T>(
  options: { privacy_level?: string },
  privacy: string,
  post: (privacy: string) => Promise<T | Fail>,
): Promise<{ result: T | Fail; notice?: Notice }> {
  const first = await post(privacy);
  if (
    !isFail(first) ||
    !("code" in first) ||
    first.code !== UNAUDITED ||
    options.privacy_level ||
    privacy === "SELF_ONLY"
  )
    return { result: first };
  return {
    result: await post("SELF_ONLY"),
    notice: PRIVATE_NOTICE,
  };
}

/** A notice rides on the outcome that finally says published (a submitted one keeps it in its handle). */
export function withNotice(out: Outcome, notice: Notice | undefined): Outcome {
  if (!notice) return out;
  if (out.kind === "published") return { ...out, notice };
  if (out.kind === "submitted") return { kind: "submitted", handle: `${out.handle}#${notice.code}` };
  return out;
}
