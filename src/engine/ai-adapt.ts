/**
 * Caption adaptation for workflow destinations through an OpenAI-compatible chat-completions endpoint
 * (AI_BASE_URL, AI_API_KEY, AI_MODEL). Adaptation is a nicety: every failure (network, status, timeout,
 * an empty answer, a dropped link) returns null and the caller publishes the original caption.
 */
import type { AiConfig } from "../config.ts";
import { errorFields, type Logger } from "../log.ts";

/** Built-in guidance per destination platform; adapt_caption_instructions replaces it. */
const GUIDANCE: Record<string, string> = {
  twitter: "Rewrite this as a concise post for X: punchy, at most two hashtags.",
  threads: "Rewrite this as a conversational Threads post.",
  bluesky: "Rewrite this as a short, friendly Bluesky post without hashtag clutter.",
  linkedin: "Rewrite this as a professional LinkedIn post with a clear first line.",
  facebook: "Rewrite this as an engaging Facebook Page post.",
  instagram: "Rewrite this as an Instagram caption with a strong first line and relevant hashtags at the end.",
  pinterest: "Rewrite this as a descriptive, keyword-rich Pinterest pin description.",
  youtube: "Rewrite this as a YouTube video description with a clear first sentence.",
  tiktok: "Rewrite this as a short, lively TikTok caption with a few relevant hashtags.",
};

const RULES =
  "Keep every link exactly as written. Do not invent facts. Answer with the new caption only, no quotes or commentary.";

const LINK = /https?:\/\/[^\s<>"')\]]+/g;

export async function adaptCaption(
  ai: AiConfig,
  p: { text: string; platform: string; instructions?: string },
  log: Logger,
): Promise<string | null> {
  const system = `${p.instructions?.trim() || GUIDANCE[p.platform] || "Rewrite this caption for the destination platform."} ${RULES}`;
  try {
    const res = await fetch(`${ai.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(ai.apiKey && { authorization: `Bearer ${ai.apiKey}` }) },
      body: JSON.stringify({
        model: ai.model,
        messages: [
          { role: "system", content: system },
          { role: "user", content: p.text },
        ],
      }),
      signal: AbortSignal.timeout(ai.timeoutMs),
    });
    if (!res.ok) {
      log.warn("caption adaptation refused; the original caption is used", { status: res.status });
      await res.body?.cancel();
      return null;
    }
    const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
    const out = body.choices?.[0]?.message?.content;
    if (typeof out !== "string" || !out.trim()) return null;
    const lost = (p.text.match(LINK) ?? []).filter((link) => !out.includes(link));
    if (lost.length) {
      log.warn("caption adaptation dropped links; the original caption is used", { links: lost.length });
      return null;
    }
    return out.trim();
  } catch (e) {
    log.warn("caption adaptation failed; the original caption is used", errorFields(e));
    return null;
  }
}
