/**
 * Where a webhook may be sent: the address rule of src/platform/address-rule.ts (no loopback, private,
 * link-local or metadata addresses) applied to every address the host resolves to, checked when an
 * endpoint is saved and again before each delivery, since DNS can change in between. A delivery connects
 * to the address it checked, never to the name again (see webhookRequest).
 */
import { isIP } from "node:net";
import type { AppContext } from "../../context.ts";
import { checkHost, dnsResolve, type Resolve } from "../address-rule.ts";

export interface WebhookGuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE=true: loopback and private addresses (and plain http to them) are allowed. */
  allowPrivate: boolean;
  resolve?: Resolve;
  /** Resolve with these DNS servers ("ip" or "ip:port") instead of the system's resolver. */
  dnsServers?: string[];
  /** Replaces the address rule (tests only: a receiver on 127.0.0.2 stands for a public host). */
  allowAddress?: (ip: string) => boolean;
}

/** A URL that passed the guard, with the address its delivery must connect to. */
export interface WebhookTarget {
  url: URL;
  address: string;
}

export type WebhookCheck = { ok: true; target: WebhookTarget } | { ok: false; problem: string };

const resolvers = new Map<string, Resolve>();
function resolverOf(o: WebhookGuardOptions): Resolve | undefined {
  if (o.resolve) return o.resolve;
  if (!o.dnsServers?.length) return undefined;
  const key = o.dnsServers.join(",");
  let r = resolvers.get(key);
  if (!r) resolvers.set(key, (r = dnsResolve(o.dnsServers)));
  return r;
}

/** Resolves the URL's host once and checks every address; the target says where to connect. */
export async function checkWebhookUrl(raw: string, o: WebhookGuardOptions): Promise<WebhookCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: "is not an absolute URL" };
  }
  // Plain http passes only where the address rule does (a public host, or any with WEBHOOK_ALLOW_PRIVATE).
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, problem: "must use https (or http)" };
  if (url.username || url.password) return { ok: false, problem: "must not carry credentials" };
  const checked = await checkHost(url.hostname, {
    resolve: resolverOf(o),
    allowAddress: o.allowPrivate ? () => true : o.allowAddress,
    allowMetadataHosts: o.allowPrivate,
  });
  return checked.ok ? { ok: true, target: { url, address: checked.address } } : checked;
}

/** Why the URL may not receive webhooks, or null when it may. */
export async function webhookUrlProblem(raw: string, o: WebhookGuardOptions): Promise<string | null> {
  const checked = await checkWebhookUrl(raw, o);
  return checked.ok ? null : checked.problem;
}

/** The guard's options for this server: WEBHOOK_ALLOW_PRIVATE, and the test hooks of ctx.webhookGuard. */
export function webhookGuardOptions(ctx: AppContext): WebhookGuardOptions {
  return {
    allowPrivate: ctx.config.webhookAllowPrivate,
    dnsServers: ctx.webhookGuard?.dnsServers,
    allowAddress: ctx.webhookGuard?.allowAddress,
  };
}

/**
 * The fetch of a delivery pinned to the checked address: the URL names the address, the Host header
 * keeps the name, and over HTTPS the name is the TLS server name, so SNI and the certificate check are
 * the name's while the connection goes where the guard looked.
 */
export function webhookRequest(
  target: WebhookTarget,
  tlsCa?: string,
): { input: URL; headers: Record<string, string>; tls?: { servername?: string; ca?: string } } {
  const { url, address } = target;
  const ca = tlsCa ? { ca: tlsCa } : {};
  if (isIP(url.hostname.replace(/^\[|\]$/g, ""))) return { input: url, headers: {}, tls: tlsCa ? ca : undefined };
  const input = new URL(url);
  input.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return {
    input,
    headers: { host: url.host },
    tls: url.protocol === "https:" ? { servername: url.hostname, ...ca } : undefined,
  };
}
