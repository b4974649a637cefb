/** The small server-rendered pages of connect flows. Every interpolated value goes through esc(). */
import { renderSVG } from "uqr";
import type { Choice, FormField } from "../../platform/sdk.ts";

/**
 * Who is asking for the connection. Shown on every page that carries a valid link, so a user handed a
 * link can tell which server and which profile an account would be connected to before typing anything.
 */
export interface Requester {
  /** INSTANCE_NAME, when the operator set one. */
  instanceName?: string;
  /** PUBLIC_URL's host: what the user can check against the address bar. */
  host: string;
  profileName: string;
}

export function esc(value: unknown): string {
  return String(value ?? "").replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!,
  );
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin-top:1rem;font-weight:600}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
small{color:#666;display:block}button{margin-top:1.5rem;padding:.6rem 1.2rem;font:inherit}.note{background:#fff7d6;padding:.6rem;border-radius:4px}
.err{background:#fde2e2;padding:.6rem;border-radius:4px}.ok{background:#e2f7e2;padding:.6rem;border-radius:4px}
.code code{font-size:1.6rem;letter-spacing:.1em;user-select:all}.who{color:#444;border-left:3px solid #99a;padding-left:.6rem}.qr{margin:1rem 0}.qr svg{width:12rem;height:12rem;display:block}`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
};

const isWebLink = (url: string) => /^https?:\/\//i.test(url);

/** Only web links are rendered as links; anything else (javascript:, data:) becomes inert. */
function safeLink(url: string): string {
  return isWebLink(url) ? url : "#";
}

function requesterNote(who: Requester): string {
  const server = who.instanceName
    ? `<strong>${esc(who.instanceName)}</strong> (${esc(who.host)})`
    : `<strong>${esc(who.host)}</strong>`;
  return `<p class="who">Requested by the Crier server ${server} for its profile <strong>${esc(who.profileName)}</strong>.</p>`;
}

/**
 * A link to open on another device (a phone app approving a signer) also as a QR code, drawn here as
 * inline SVG: no image service learns the link, and the page works offline.
 */
function qrCode(url: string): string {
  if (!isWebLink(url)) return "";
  return `<figure class="qr" aria-label="QR code of the link above">${renderSVG(url, { pixelSize: 4 })}
<figcaption><small>Or scan this code with the phone where the app is signed in.</small></figcaption></figure>`;
}

export function htmlResponse(html: string, status = 200): Response {
  return new Response(html, { status, headers: HEADERS });
}

export function resultPage(
  input: { ok: boolean; platform: string; title: string; message: string; requester?: Requester },
  status = 200,
): Response {
  const body = `<h1>${esc(input.title)}</h1>${input.requester ? requesterNote(input.requester) : ""}
<p class="${input.ok ? "ok" : "err"}">${esc(input.message)}</p>
<p>${input.ok ? "You can close this window and list the accounts through the API to see it." : "Nothing was connected. Start again from the API to get a new link."}</p>
<p><a href="/accounts">Back to the accounts in the dashboard</a></p>`;
  return htmlResponse(layout(`${input.title} · ${input.platform}`, body), status);
}

export function formPage(input: {
  platform: string;
  title: string;
  instructions: string;
  fields: FormField[];
  state: string;
  action: string;
  sandbox: boolean;
  requester: Requester;
  error?: string;
  /** The refusal's machine-readable name (ConnectError.code), shown with the error. */
  errorCode?: string;
  values?: Record<string, string>;
  /** Hidden values carried to the submission (already signed by the caller). */
  hidden?: Record<string, string>;
  link?: { url: string; label: string };
  /** A value to copy elsewhere (a one-time code), shown large. */
  code?: { label: string; value: string };
  /** Suggestions per field (the flow's prepare), offered as a list to pick from. */
  choices?: Record<string, Choice[]>;
}): Response {
  const fields = input.fields
    .map((f) => {
      const choices = f.type === "password" ? [] : (input.choices?.[f.name] ?? []);
      const list = choices.length
        ? `\n<datalist id="f_${esc(f.name)}_list">${choices.map((c) => `<option value="${esc(c.value)}">${esc(c.label)}</option>`).join("")}</datalist>`
        : "";
      return `<label for="f_${esc(f.name)}">${esc(f.label)}</label>
<input id="f_${esc(f.name)}" name="${esc(f.name)}" type="${esc(f.type)}" placeholder="${esc(f.placeholder ?? "")}" required
 autocomplete="off"${choices.length ? ` list="f_${esc(f.name)}_list"` : ""} value="${f.type === "password" ? "" : esc(input.values?.[f.name] ?? "")}">${f.help ? `<small>${esc(f.help)}</small>` : ""}${list}`;
    })
    .join("\n");
  const body = `<h1>${esc(input.title)}</h1>
${requesterNote(input.requester)}
${input.sandbox ? `<p class="note">Sandbox profile: this connects to Crier's emulator, not the real platform. Any values are accepted.</p>` : ""}
${
  input.error
    ? `<p class="err"${input.errorCode ? ` data-code="${esc(input.errorCode)}"` : ""}>${esc(input.error)}${
        input.errorCode ? ` <small>(${esc(input.errorCode)})</small>` : ""
      }</p>`
    : ""
}
<p>${esc(input.instructions)}</p>
${input.code ? `<p class="code">${esc(input.code.label)}<br><code>${esc(input.code.value)}</code></p>` : ""}
${input.link ? `<p><a href="${esc(safeLink(input.link.url))}" target="_blank" rel="noopener noreferrer">${esc(input.link.label)}</a></p>${qrCode(input.link.url)}` : ""}
<form method="post" action="${esc(input.action)}">
<input type="hidden" name="state" value="${esc(input.state)}">
${Object.entries(input.hidden ?? {})
  .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
  .join("\n")}
${fields}
<button type="submit">${input.fields.length ? "Connect" : "I have approved it: connect"}</button>
</form>`;
  return htmlResponse(layout(`${input.title} · ${input.platform}`, body), input.error ? 400 : 200);
}

/**
 * The page that sends the browser on to a provider's authorization page once an OAuth flow's question
 * was answered (a refresh, which the page's policy does not restrict, and a link for browsers without it).
 */
export function redirectPage(input: { platform: string; url: string; requester: Requester }): Response {
  const url = safeLink(input.url);
  const body = `<h1>Continue to authorize Crier</h1>
${requesterNote(input.requester)}
<p>Your server asks you to sign in and allow Crier to post for you.</p>
<p><a href="${esc(url)}">Continue to ${esc(hostOf(url))}</a></p>`;
  const html = layout(`Authorize · ${input.platform}`, body).replace(
    "<title>",
    `<meta http-equiv="refresh" content="0;url=${esc(url)}"><title>`,
  );
  return htmlResponse(html);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
