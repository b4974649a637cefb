/**
 * media[].alt_text against the target's platform: a text longer than the platform takes is refused at
 * creation, naming the target, the file and the limit, rather than failing at publish. Where the platform
 * has no alt text for that kind of media (Telegram, a video on X) the field is ignored, not refused: the
 * post still goes out, and capabilities.alt_text / media_requirements.alt_text say so beforehand.
 */
import { countText, UNIT_NAMES } from "../text.ts";
import type { Problem, TargetCheck } from "./content-check.ts";

export function altTextProblems(t: Pick<TargetCheck, "plugin" | "media">): Problem[] {
  const support = t.plugin.altText;
  if (!support) return [];
  const problems: Problem[] = [];
  t.media.forEach((m, i) => {
    const rule = support[m.type];
    if (!rule || rule.max_length === null || !m.alt_text) return;
    const length = countText(m.alt_text, rule.unit);
    if (length > rule.max_length)
      problems.push({
        code: "alt_text_too_long",
        message: `media[${i}].alt_text is ${length} ${UNIT_NAMES[rule.unit]} long; ${t.plugin.displayName} takes at most ${rule.max_length}.`,
        hint: `Shorten media[${i}].alt_text to ${rule.max_length} ${UNIT_NAMES[rule.unit]} or fewer.`,
        field: `media[${i}].alt_text`,
      });
  });
  return problems;
}
