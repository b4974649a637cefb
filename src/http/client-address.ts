/**
 * The peer address of each request, recorded by the listening server (src/http/serve.ts) before the app sees
 * it: the app runs under app.handle(), where Elysia has no server to ask. Requests handled in-process
 * (tests) have none and count as "local".
 */
const addresses = new WeakMap<Request, string>();

export function recordClientAddress(request: Request, address: string | undefined) {
  if (address) addresses.set(request, address);
}

export function clientAddress(request: Request): string {
  return addresses.get(request) ?? "local";
}
