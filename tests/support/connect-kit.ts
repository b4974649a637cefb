/**
 * Real-HTTP helpers for connect flows: a harness whose app listens on 127.0.0.1 with PUBLIC_URL set to
 * that address (so hosted pages, OAuth redirects and /sandbox/ URLs are reachable), and a browser-like
 * walk through a hosted form.
 */
import type { Config } from "../../src/config.ts";
import { createHarness, type Harness, type HostOptions } from "./harness.ts";

export interface ListeningHarness extends Harness {
  url: string;
  stop(): Promise<void>;
}

export async function listeningHarness(
  env: Record<string, string> = {},
  overrides: Partial<Config> = {},
  host: HostOptions = {},
): Promise<ListeningHarness> {
  let handle: (req: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (req) => handle(req) });
  const url = `http://127.0.0.1:${server.port}`;
  const h = await createHarness({ publicUrl: url, ...overrides, env: { ...env } }, {}, host);
  handle = (req) => h.app.handle(req);
  return {
    ...h,
    url,
    async stop() {
      await server.stop(true);
      await h.close();
    },
  };
}

/** The named inputs of a hosted form other than the state, with their placeholders. */
export function formFields(html: string): { name: string; type: string; placeholder: string; value: string }[] {
  const out: { name: string; type: string; placeholder: string; value: string }[] = [];
  for (const m of html.matchAll(/<input\b([^>]*)>/g)) {
    const attr = (n: string) => new RegExp(`\\b${n}="([^"]*)"`).exec(m[1])?.[1] ?? "";
    if (attr("type") === "hidden") continue;
    const unescape = (v: string) =>
      v
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
    out.push({
      name: attr("name"),
      type: attr("type"),
      placeholder: unescape(attr("placeholder")),
      value: unescape(attr("value")),
    });
  }
  return out;
}

export function hiddenState(html: string): string {
  const m = /name="state" value="([^"]*)"/.exec(html);
  if (!m) throw new Error("no state in the form");
  return m[1];
}

/** The one-time code a hosted form shows (Telegram's proof of control), if it shows one. */
export function shownCode(html: string): string | undefined {
  return /<p class="code">[\s\S]*?<code>([^<]*)<\/code>/.exec(html)?.[1];
}

/** Opens a hosted form and submits it; values default to each field's placeholder. */
export async function submitHostedForm(
  hostedUrl: string,
  values: Record<string, string> = {},
): Promise<{ status: number; html: string }> {
  const page = await fetch(hostedUrl);
  const html = await page.text();
  if (page.status !== 200) return { status: page.status, html };
  return submitShownForm(hostedUrl, html, values);
}

/** Submits a hosted form already opened (its page's html): what a user does after acting on the page. */
export async function submitShownForm(
  hostedUrl: string,
  html: string,
  values: Record<string, string> = {},
): Promise<{ status: number; html: string }> {
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    form.set(
      m[1],
      m[2]
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, "&"),
    );
  if (!form.get("state")) throw new Error("no state in the form");
  // What the page filled in (sandbox), else the example in the placeholder.
  for (const f of formFields(html)) form.set(f.name, values[f.name] ?? (f.value || f.placeholder || "conformance"));
  // A flow with an approval link (managed signer): the user opens it and approves before submitting.
  const link = /<a href="([^"]*)" target="_blank"/.exec(html);
  if (link) await (await fetch(link[1].replace(/&amp;/g, "&"))).text();
  const action = new URL(/<form method="post" action="([^"]*)"/.exec(html)![1], hostedUrl);
  const res = await fetch(action, {
    method: "POST",
    body: form,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  const answer = await res.text();
  // An OAuth flow's question answered (Mastodon's server): the page sends the browser on to the provider.
  const onward = /<meta http-equiv="refresh" content="0;url=([^"]*)">/.exec(answer);
  if (onward) return followAuthorization(onward[1].replace(/&amp;/g, "&"));
  return { status: res.status, html: answer };
}

/** Follows an authorization URL the way a browser would, through to Crier's callback page. */
export async function followAuthorization(authorizationUrl: string): Promise<{ status: number; html: string }> {
  let url = authorizationUrl;
  for (let i = 0; i < 5; i++) {
    const res = await fetch(url, { redirect: "manual" });
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      url = new URL(location, url).toString();
      continue;
    }
    return { status: res.status, html: await res.text() };
  }
  throw new Error("too many redirects");
}
