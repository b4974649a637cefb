/**
 * RFC 7240 Prefer: the `handling` preference (lenient or strict). A client asks for lenient handling to
 * have what a platform cannot take adapted instead of refused; the answer says it was honoured with
 * Preference-Applied. Preferences are case-insensitive tokens, several in one header or across headers.
 */
export type Handling = "lenient" | "strict";

export function handlingPreference(request: Request): Handling | null {
  const header = request.headers.get("prefer");
  if (!header) return null;
  let found: Handling | null = null;
  for (const preference of header.split(",")) {
    const [name, value] = preference
      .split(";")[0]
      .split("=")
      .map((s) => s.trim().replace(/^"|"$/g, "").toLowerCase());
    // The first occurrence of a preference wins (RFC 7240 §2).
    if (name === "handling" && found === null && (value === "lenient" || value === "strict")) found = value;
  }
  return found;
}

/** The response headers saying lenient handling was applied, and that answers vary with Prefer. */
export const LENIENT_APPLIED = { "preference-applied": "handling=lenient", vary: "Prefer" } as const;

export const LENIENT_NOTE =
  "Prefer: handling=lenient (RFC 7240) adapts instead of refusing what a target's platform cannot take: text over the limit is cut at a word boundary " +
  "in the platform's own unit (with an ellipsis), hashtags past the cap are removed from the end, media of a kind the platform refuses, of the second kind " +
  "where kinds cannot mix, or past its counts are dropped. Each target then returns adjustments [{code, message}] naming what was changed, and the answer " +
  "carries Preference-Applied: handling=lenient. What cannot be made to fit (media a platform requires, a file too large or too long) is still a 400. " +
  "Without the header (or with handling=strict) every such case is a 400 naming the target, as before.";
