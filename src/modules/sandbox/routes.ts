/**
 * /sandbox/<platform>/...: the emulators sandbox profiles publish to live in this process, and Crier's
 * own calls reach them in process (src/platform/host/provider.ts), so they are not served to the
 * network. The public listener answers only the steps of a sandbox connect flow a user's browser must
 * open itself (the OAuth authorize redirect, and the pages an emulator lists as browserPaths, such as
 * Farcaster's approval link), and only with the flow's valid signed connect state of a sandbox
 * profile; every other request under /sandbox/<platform>/ is a 404. /sandbox and
 * /v1/sandbox/deliveries show what the emulators received.
 */
import { Elysia } from "elysia";
import { secretKeys } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Forbidden } from "../../http/errors.ts";
import { errors, Paged } from "../../http/model.ts";
import { authenticate, type Principal } from "../keys/service.ts";
import { verifyState } from "../connect/state.ts";
import { stateSpent } from "../connect/used-states.ts";
import { inboxPage, refusalPage } from "./inbox-page.ts";
import { Delivery, DeliveryListQuery } from "./model.ts";
import { inbox, listDeliveries } from "./service.ts";
import { INBOX_SESSION_TTL_MS, inboxSession, principalById, redeemInboxLink, sessionKey } from "./sign-in.ts";
import { errorFields } from "../../log.ts";

const PREFIX = "/sandbox/";
const AUTHORIZE = "/oauth/authorize";

function json(status: number, code: string, message: string, hint: string) {
  return Response.json({ error: { code, message, hint } }, { status, headers: { "cache-control": "no-store" } });
}

const notServed = (method: string, path: string) =>
  json(
    404,
    "not_found",
    `Route ${method} ${path} not found.`,
    "Sandbox emulators are not served to the network: publish through the API with a sandbox profile's key.",
  );

/** The browser steps an emulator declares (the same for every instance of a platform), read once. */
const browserPathsOf = new WeakMap<AppContext, Map<string, string[]>>();
function browserPaths(ctx: AppContext, platform: string): string[] {
  let known = browserPathsOf.get(ctx);
  if (!known) browserPathsOf.set(ctx, (known = new Map()));
  let paths = known.get(platform);
  if (!paths) known.set(platform, (paths = ctx.platforms.newEmulator(platform)?.browserPaths ?? []));
  return paths;
}

/**
 * The sandbox OAuth authorization page: no login, it sends the browser straight back to Crier's own
 * callback with a code, as a provider does once the user has agreed. Only Crier's callback is allowed
 * as redirect_uri, so this cannot be used to bounce browsers elsewhere.
 */
function authorize(ctx: AppContext, platform: string, url: URL): Response {
  const redirect = url.searchParams.get("redirect_uri") ?? "";
  const allowed = `${ctx.config.publicUrl.replace(/\/+$/, "")}/v1/accounts/callback/${platform}`;
  if (redirect !== allowed)
    return json(
      400,
      "invalid_redirect_uri",
      `redirect_uri must be ${allowed}`,
      "Start from POST /v1/accounts/connect.",
    );
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
  if (!ctx.platforms.hasEmulator(platform))
    return json(404, "not_found", `No sandbox emulator for '${platform}'.`, "See GET /v1/accounts for the platforms.");
  const step =
    request.method === "GET" &&
    (path === AUTHORIZE || browserPaths(ctx, platform).some((p) => path.startsWith(p) && path.length > p.length));
  if (!step) return notServed(request.method, url.pathname);
  // The flow's own state, unspent: only a sandbox profile's key could have started it, minutes ago.
  const check = verifyState(
    secretKeys(ctx.config),
    url.searchParams.get("state") ?? undefined,
    platform,
    ctx.clock.now(),
  );
  if (!check.ok || !check.state.sandbox || (await stateSpent(ctx.db, check.state)))
    return json(
      400,
      "invalid_state",
      "This sandbox step needs the signed state of a sandbox connect flow that has not ended.",
      "Start again with POST /v1/accounts/connect/{platform} using a sandbox profile's key.",
    );
  if (path === AUTHORIZE) return authorize(ctx, platform, url);
  const emulator = ctx.platforms.emulatorFor(platform, check.state.profileId)!;
  try {
    return await emulator.handle(request, path);
  } catch (e) {
    ctx.log.error("sandbox emulator failed", { platform, path, ...errorFields(e) });
    return json(500, "emulator_error", "The sandbox emulator failed on this request.", "Try again.");
  }
}

const COOKIE = "crier_sandbox_session";

const cookieOf = (request: Request) =>
  new RegExp(`(?:^|;\\s*)${COOKIE}=([^;]+)`).exec(request.headers.get("cookie") ?? "")?.[1];

/** The page refusing a principal that cannot read the inbox, or null when it can. */
function refusal(principal: Principal | null, invalid: string): Response | null {
  if (!principal) return refusalPage(401, invalid);
  if (!principal.sandbox)
    return refusalPage(403, "This key belongs to a live profile; the inbox is for sandbox profiles.");
  if (!principal.scopes.includes("posts:read")) return refusalPage(403, "This API key lacks the 'posts:read' scope.");
  return null;
}

/**
 * GET /sandbox: the inbox page. A browser signs in with the one-time link the CLI prints
 * (?sign_in=…, sign-in.ts), which becomes an HttpOnly session cookie scoped to /sandbox naming the key,
 * and is sent back to the bare address so the link leaves the address bar and history; the
 * platform_post_url links (/sandbox#post-<id>) then open signed in. Tools may send the key as a bearer
 * header instead. An API key in the address (?key=, as links once carried) signs nobody in.
 */
async function inboxRoute(ctx: AppContext, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const now = ctx.clock.now();
  const link = url.searchParams.get("sign_in");
  if (link !== null) {
    const keyId = await redeemInboxLink(ctx.db, secretKeys(ctx.config), link, now);
    const principal = keyId ? await principalById(ctx.db, keyId, now) : null;
    const refused = refusal(
      principal,
      "This sign-in link is not valid, was used already or has expired: each link signs in once, within 15 minutes.",
    );
    if (refused) return refused;
    const secure = ctx.config.publicUrl.startsWith("https:") ? "; Secure" : "";
    return new Response(null, {
      status: 303,
      headers: {
        location: "/sandbox",
        "cache-control": "no-store",
        "set-cookie": `${COOKIE}=${inboxSession(ctx.config.secretKey, keyId!, now)}; Path=/sandbox; HttpOnly; SameSite=Lax; Max-Age=${INBOX_SESSION_TTL_MS / 1000}${secure}`,
      },
    });
  }
  if (url.searchParams.has("key"))
    return refusalPage(401, "API keys are not taken in the address: sign in with the link the CLI prints.");
  const session = cookieOf(request);
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  const keyId = session ? sessionKey(secretKeys(ctx.config), session, now) : null;
  const principal = keyId
    ? await principalById(ctx.db, keyId, now)
    : bearer
      ? await authenticate(ctx.db, bearer, now)
      : null;
  const refused = refusal(
    principal,
    session || bearer
      ? "This sign-in has ended: the key was revoked or expired, or the session is over."
      : "Sign in with the link the CLI prints for a sandbox key to see the sandbox inbox.",
  );
  if (refused) return refused;
  return inboxPage(await inbox(ctx, principal!.profileId));
}

export function sandboxRoutes(ctx: AppContext) {
  return new Elysia({ name: "sandbox" })
    .onRequest(({ request }) => handleSandbox(ctx, request))
    .get("/sandbox", ({ request }) => inboxRoute(ctx, request), { detail: { hide: true } });
}

/** GET /v1/sandbox/deliveries: the inbox as JSON, for integrators' tests. */
export function sandboxApiRoutes(ctx: AppContext) {
  return new Elysia({ name: "sandbox-api", prefix: "/v1/sandbox", detail: { tags: ["Sandbox"] } }).use(auth(ctx)).get(
    "/deliveries",
    ({ principal, query }) => {
      if (!principal.sandbox)
        throw new Forbidden(
          "not_a_sandbox",
          "This key belongs to a live profile; deliveries exist only in sandbox profiles.",
          "Use a key of a sandbox profile (crier profiles create --sandbox, then crier keys create --profile <id>).",
        );
      return listDeliveries(ctx, principal.profileId, query);
    },
    {
      scope: "posts:read",
      query: DeliveryListQuery,
      response: { 200: Paged(Delivery), ...errors(400, 403, 404) },
      detail: {
        summary: "List sandbox deliveries",
        description:
          "What the sandbox emulators received for this sandbox profile's published targets, newest first by published_at: " +
          "the text, media, thread structure (reply_to: the delivery answered) and options as the platform got them. " +
          "account_id narrows to one account (404 when it is not this profile's). A key of a live profile gets 403 not_a_sandbox. " +
          "The same content is shown as a page at /sandbox, which a browser opens with the one-time sign-in link `crier keys create` " +
          "or `crier keys inbox-link` prints (no API key in any address). The emulators themselves are not served to the network.",
      },
    },
  );
}
