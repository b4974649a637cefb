/**
 * The sandbox inbox page: per connected sandbox account, the posts its emulator received, newest first,
 * drawn plainly the way the platform shows a post (author, text, media, thread replies under their
 * parent, options such as a silent message). Every interpolated value goes through esc(); no script, no
 * outside assets.
 */
import { esc } from "../connect/pages.ts";
import type { Delivery } from "./model.ts";

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1c1c1c;background:#f4f5f7}
h1{font-size:1.4rem}h2{font-size:1.05rem;margin:2rem 0 .5rem}.muted{color:#667}
.thread{background:#fff;border:1px solid #dde;border-radius:10px;margin:.6rem 0;padding:.2rem 0}
.post{padding:.6rem .9rem}.post+.post{border-top:1px solid #eef}.reply{margin-left:1.4rem;border-left:3px solid #dde}
.who{font-weight:600}.who small{font-weight:400;color:#667}.text{white-space:pre-wrap;word-wrap:break-word;margin:.3rem 0}
.media{display:flex;flex-wrap:wrap;gap:.4rem}.media img{max-width:9rem;max-height:9rem;border-radius:6px;object-fit:cover}
.media span{display:inline-block;padding:1.6rem .8rem;background:#e8e9ee;border-radius:6px;font-size:.85rem}
.chip{display:inline-block;font-size:.8rem;background:#eef1ff;border-radius:99px;padding:0 .5rem;margin:.2rem .2rem 0 0}
.err{background:#fde2e2;padding:.6rem;border-radius:4px}a{color:#2748c8}`;

const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src http: https:",
};

function page(title: string, body: string, status = 200, headers: Record<string, string> = {}): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
  return new Response(html, { status, headers: { ...HEADERS, ...headers } });
}

/** A page refusing the visitor: no key, a wrong key, or a key of a live profile. */
export function refusalPage(status: number, message: string): Response {
  return page(
    "Sandbox inbox",
    `<h1>Sandbox inbox</h1><p class="err">${esc(message)}</p>
<p class="muted">Open the sign-in link <code>crier keys create</code> printed for a sandbox key, or get a new one with <code>crier keys inbox-link &lt;key id&gt;</code>: each link signs in once, within 15 minutes.</p>`,
    status,
  );
}

/** Options as the platform shows them: Telegram's disable_notification is a silent message, and so on. */
const OPTION_LABELS: Record<string, (v: unknown) => string | null> = {
  disable_notification: (v) => (v ? "silent" : null),
  protect_content: (v) => (v ? "protected" : null),
  chat_id: () => null,
  facets: () => null,
};

function chips(options: Record<string, unknown>): string {
  return Object.entries(options)
    .map(([k, v]) =>
      OPTION_LABELS[k] ? OPTION_LABELS[k](v) : `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`,
    )
    .filter((c): c is string => c !== null)
    .map((c) => `<span class="chip">${esc(c)}</span>`)
    .join("");
}

const sizeText = (n: number | null) =>
  n === null
    ? ""
    : n < 1024
      ? `${n} B`
      : n < 1 << 20
        ? `${Math.round(n / 1024)} KB`
        : `${(n / (1 << 20)).toFixed(1)} MB`;

function media(items: Delivery["media"]): string {
  if (!items.length) return "";
  const one = (m: Delivery["media"][number]) => {
    const label = [m.type, m.content_type, sizeText(m.size)].filter(Boolean).join(" · ");
    // Only web addresses become images; anything else (javascript:, data:) stays a label. A video shows
    // its cover or poster frame.
    const picture = m.preview_url;
    return picture && /^https?:\/\//i.test(picture)
      ? `<img src="${esc(picture)}" alt="${esc(m.alt_text ?? label)}" loading="lazy">`
      : `<span>${esc(label)}</span>`;
  };
  return `<div class="media">${items.map(one).join("")}</div>`;
}

function entry(d: Delivery, isReply: boolean): string {
  const when = d.received_at.replace("T", " ").slice(0, 19);
  const replying = d.reply_to_platform_post_id
    ? `<div class="muted">↳ replying to ${
        d.reply_to ? `<a href="#post-${esc(d.reply_to)}">an earlier post</a>` : esc(d.reply_to_platform_post_id)
      }</div>`
    : "";
  return `<article class="post${isReply ? " reply" : ""}" id="post-${esc(d.id)}">
<div class="who">@${esc(d.username)} <small>· ${esc(d.platform)} · ${esc(when)} UTC</small></div>${replying}
<div class="text">${esc(d.text)}</div>${media(d.media)}<div>${chips(d.options)}</div>
<div class="muted"><small>id ${esc(d.platform_post_id)}</small></div></article>`;
}

/**
 * Deliveries of one account as threads: the posts of one Crier post go together in the order they
 * were received (replies under their parent); threads newest first.
 */
function threads(deliveries: Delivery[]): string {
  const byPost = new Map<string, Delivery[]>();
  for (const d of deliveries) byPost.set(d.post_id, [...(byPost.get(d.post_id) ?? []), d]);
  return [...byPost.values()]
    .map((items) => items.sort((a, b) => a.received_at.localeCompare(b.received_at) || a.id.localeCompare(b.id)))
    .sort((a, b) => b.at(-1)!.received_at.localeCompare(a.at(-1)!.received_at))
    .map(
      (items) =>
        `<div class="thread">${items.map((d) => entry(d, d.reply_to_platform_post_id !== null)).join("")}</div>`,
    )
    .join("");
}

export function inboxPage(
  content: {
    accounts: { id: string; platform: string; username: string; status: string }[];
    deliveries: Delivery[];
  },
  headers: Record<string, string> = {},
): Response {
  const sections = content.accounts.map((a) => {
    const mine = content.deliveries.filter((d) => d.account_id === a.id);
    return `<section id="account-${esc(a.id)}"><h2>${esc(a.platform)} · @${esc(a.username)} <small class="muted">${esc(a.status)}</small></h2>
${mine.length ? threads(mine) : `<p class="muted">Nothing received yet.</p>`}</section>`;
  });
  return page(
    "Sandbox inbox",
    `<h1>Sandbox inbox</h1><p class="muted">What the sandbox platforms received from this profile, newest first. Nothing here left this server.</p>
${sections.length ? sections.join("\n") : `<p class="muted">No sandbox account is connected yet: POST /v1/accounts/connect/{platform}.</p>`}`,
    200,
    headers,
  );
}
