/**
 * The eight scopes of the spec, then Crier's own (webhooks:read / webhooks:write, for /v1/webhooks);
 * "all" grants every one. Every route names exactly one of them (the `scope` macro in auth.ts).
 */
export const SCOPES = [
  "accounts:read",
  "accounts:write",
  "media:read",
  "media:write",
  "posts:read",
  "posts:write",
  "workflows:read",
  "workflows:write",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
