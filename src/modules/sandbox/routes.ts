/**
 * /sandbox/<platform>/...: the emulators sandbox profiles publish to, served by this same process (one
 * emulator instance per platform per process, from the registry). Requests are answered in onRequest,
 * before any body parsing, so each emulator reads the raw request exactly as the platform would.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";

const PREFIX = "/sandbox/";

function json(status: number, code: string, message: string) {
  return Response.json({ error: { code, message } }, { status });
}

/**
 * The sandbox OAuth authorization page: no login, it sends the browser straight back to Crier's own
 * callback with a code, as a provider does once the user has agreed. Only Crier's callback is allowed
 * as redirect_uri, so this cannot be used to bounce browsers elsewhere.
 */
function authorize(ctx: AppContext, platform: string, url: URL): Response {
  const redirect = url.searchParams.get("redirect_uri") ?? "";
  const allowed = `${ctx.config.publicUrl.replace(/\/+$/, "")}/v1/accounts/callback/${platform}`;
  if (redirect !== allowed) return json(400, "invalid_redirect_uri", `redirect_uri must be ${allowed}`);
  const target = new URL(redirect);
  target.searchParams.set("code", `sandbox_${crypto.randomUUID()}`);
  target.searchParams.set("state", url.searchParams.get("state") ?? "");
  return new Response(null, { status: 302, headers: { location: target.toString(), "cache-control": "no-store" } });
}

export async function handleSandbox(ctx: AppContext, request: Request): Promise<Response | undefined> {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(PREFIX)) return undefined;
  const rest = url.pathname.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  const platform = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? "/" : rest.slice(slash);
  const emulator = ctx.platforms.emulatorFor(platform);
  if (!emulator) return json(404, "not_found", `No sandbox emulator for '${platform}'.`);
  if (path === "/oauth/authorize" && request.method === "GET") return authorize(ctx, platform, url);
  try {
    return await emulator.handle(request, path);
  } catch (e) {
    ctx.log.error("sandbox emulator failed", { platform, path, error: (e as Error)?.message });
    return json(500, "emulator_error", "The sandbox emulator failed on this request.");
  }
}

export function sandboxRoutes(ctx: AppContext) {
  return new Elysia({ name: "sandbox" }).onRequest(({ request }) => handleSandbox(ctx, request));
}
