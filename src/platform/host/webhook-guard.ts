/**
 * Where a webhook may be sent: the address rule of the media fetch guard (no loopback, private,
 * link-local or metadata addresses) applied to every address the host resolves to, checked when an
 * endpoint is saved and again before each delivery, since DNS can change in between.
 */
import { isIP } from "node:net";
import { isForbiddenAddress, METADATA_HOSTS, systemResolve } from "./media-guard.ts";

export interface WebhookGuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE=true: loopback and private addresses (and plain http to them) are allowed. */
  allowPrivate: boolean;
  resolve?: (host: string) => Promise<string[]>;
}

/** Why the URL may not receive webhooks, or null when it may. */
export async function webhookUrlProblem(raw: string, o: WebhookGuardOptions): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not an absolute URL";
  }
  // Plain http passes only where the address rule does (a public host, or any with WEBHOOK_ALLOW_PRIVATE).
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https (or http)";
  if (url.username || url.password) return "must not carry credentials";
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (!o.allowPrivate && METADATA_HOSTS.has(host)) return `points at a cloud metadata service (${host})`;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (o.resolve ?? systemResolve)(host);
  } catch (e) {
    return `has a host that does not resolve (${(e as Error).message})`;
  }
  if (!addresses.length) return "has a host with no address";
  const inside = addresses.find((a) => isForbiddenAddress(a));
  if (inside && !o.allowPrivate) return `resolves to ${inside}, a loopback, private, link-local or metadata address`;
  return null;
}
