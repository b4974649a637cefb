/**
 * The address rule of every request Crier makes on a user's behalf to a host the user named (media URLs,
 * webhook URLs, a Nostr signer's relays): never this host, the private network, link-local (where cloud
 * metadata services live) or ranges that are not unicast internet. It lives in the SDK so plugins that
 * dial user-given hosts apply the same rule as the host's guards.
 */
import { lookup, Resolver } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  // ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible form ::a.b.c.d,
  // which some stacks still route to the IPv4 address it carries.
  ["::", 96],
  ["fc00::", 7],
  ["fe80::", 10],
  // Site-local (deprecated, RFC 3879) is still a private network wherever it is configured.
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["100::", 64],
  // 6to4 (RFC 3056) reaches the IPv4 address it carries through a relay, whatever that address is.
  ["2002::", 16],
  // Local-use NAT64 (RFC 8215): translated by the operator's own gateway, to any IPv4 address.
  ["64:ff9b:1::", 48],
] as const)
  blocked.addSubnet(net, bits, "ipv6");

export const METADATA_HOSTS = new Set([
  "metadata.google.internal",
  "metadata",
  "instance-data",
  "metadata.azure.internal",
]);

/** The eight 16-bit words of an IPv6 address in any textual form (compressed, expanded, dotted tail). */
function ipv6Words(ip: string): number[] | null {
  let text = ip.toLowerCase().replace(/%.*$/, "");
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const b = dotted.slice(2).map(Number);
    if (b.some((x) => x > 255)) return null;
    text = `${dotted[1]}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const part = (s: string) => (s ? s.split(":").map((w) => parseInt(w, 16)) : []);
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const words = [...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** True when the address is one a request on a user's behalf must refuse (anything not an IP too). */
export function isForbiddenAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, "ipv4");
  if (family !== 6) return true;
  const w = ipv6Words(ip);
  if (!w) return true;
  // IPv4-mapped (::ffff:a.b.c.d) and well-known NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address that decides.
  const mapped = w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff;
  const nat64 = w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0);
  if (mapped || nat64) return blocked.check(v4Of(w[6], w[7]), "ipv4");
  return blocked.check(w.map((x) => x.toString(16)).join(":"), "ipv6");
}

/** A resolver: a host name to every address it has. */
export type Resolve = (host: string) => Promise<string[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address of every family. */
export async function systemResolve(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

/**
 * A resolver that asks these DNS servers ("ip" or "ip:port") for A and AAAA records, for a caller that
 * must not use the system's (tests point it at a stub on 127.0.0.1 that changes its answers).
 */
export function dnsResolve(servers: string[]): Resolve {
  const r = new Resolver({ timeout: 2000, tries: 2 });
  r.setServers(servers);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([r.resolve4(host), r.resolve6(host)]);
    const found = [v4, v6].flatMap((x) => (x.status === "fulfilled" ? x.value : []));
    if (found.length) return found;
    throw (v4 as PromiseRejectedResult).reason;
  };
}

export interface AddressCheckOptions {
  resolve?: Resolve;
  /** Replaces the rule (tests serve from 127.0.0.x; WEBHOOK_ALLOW_PRIVATE allows everything). */
  allowAddress?: (ip: string) => boolean;
  /** Lets names like metadata.google.internal through (only where every private address is allowed). */
  allowMetadataHosts?: boolean;
}

/** Where a checked host may be reached: every address passed, and `address` is the one to connect to. */
export type CheckedHost =
  | { ok: true; host: string; address: string; addresses: string[] }
  | { ok: false; problem: string; /** DNS failed: worth trying again later. */ transient: boolean };

/**
 * Resolves the host once and checks every address it has. The caller connects to `address`, never to
 * the name again: a name that resolves differently a moment later (DNS rebinding) cannot steer the
 * connection past this check.
 */
export async function checkHost(hostname: string, o: AddressCheckOptions = {}): Promise<CheckedHost> {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const allowed = o.allowAddress ?? ((ip: string) => !isForbiddenAddress(ip));
  if (METADATA_HOSTS.has(host) && !o.allowMetadataHosts)
    return { ok: false, problem: `points at a cloud metadata service (${host})`, transient: false };
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (o.resolve ?? systemResolve)(host);
  } catch (e) {
    return { ok: false, problem: `has a host that does not resolve (${(e as Error).message})`, transient: true };
  }
  if (!addresses.length) return { ok: false, problem: `has a host with no address`, transient: true };
  const bad = addresses.find((a) => !allowed(a));
  if (bad)
    return {
      ok: false,
      problem: `resolves to ${bad}, a loopback, private, link-local or metadata address`,
      transient: false,
    };
  // IPv4 first where the name has both: a server without IPv6 routes would fail where the name works.
  return { ok: true, host, address: addresses.find((a) => isIP(a) === 4) ?? addresses[0], addresses };
}

/** Why a user-given URL's host may not be reached, or null when it may (one resolution, every address). */
export async function urlHostProblem(raw: string, o: AddressCheckOptions = {}): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not an absolute URL";
  }
  if (!url.hostname) return "has no host";
  const checked = await checkHost(url.hostname, o);
  return checked.ok ? null : checked.problem;
}
