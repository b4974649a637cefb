import { BlockList, isIP } from "node:net";

/**
 * The client address of each request, recorded by the listening server (src/http/serve.ts) before the app
 * sees it: the app runs under app.handle(), where Elysia has no server to ask. Requests handled in-process
 * (tests, MCP tool calls) have none and count as "local".
 */
const addresses = new WeakMap<Request, string>();

export function recordClientAddress(request: Request, address: string | undefined) {
  if (address) addresses.set(request, address);
}

export function clientAddress(request: Request): string {
  return addresses.get(request) ?? "local";
}

/** An IPv4 peer on a dual-stack socket is reported as ::ffff:a.b.c.d; the plain form is the one to compare. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/** An entry of TRUSTED_PROXIES (an address, or a range in CIDR notation) is well-formed. */
export function isAddressOrRange(entry: string): boolean {
  const [address, bits, extra] = entry.split("/");
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export class TrustedProxies {
  private list = new BlockList();
  readonly empty: boolean;

  constructor(entries: string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split("/");
      const type = isIP(address) === 4 ? "ipv4" : "ipv6";
      if (bits === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(bits), type);
    }
    this.empty = entries.length === 0;
  }

  has(address: string): boolean {
    const a = plain(address);
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 4 ? "ipv4" : "ipv6");
  }

  /**
   * Who sent the request. The peer, unless it is a listed proxy: then X-Forwarded-For is read from the
   * right (each proxy appends the address it received from), skipping listed proxies, and the first
   * address that is not one is the client. Anything left of it was written by the client itself and is
   * not believed. A malformed entry ends the walk at the last proxy.
   */
  client(peer: string, forwardedFor: string | null): string {
    let client = plain(peer);
    if (this.empty || !forwardedFor || !this.has(client)) return client;
    const hops = forwardedFor
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain(hops[i]);
      if (!isIP(hop)) return client;
      client = hop;
      if (!this.has(hop)) return client;
    }
    return client;
  }
}
