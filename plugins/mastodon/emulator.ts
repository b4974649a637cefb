/**
 * An emulator of a Mastodon server's client API, the part Crier calls (docs.joinmastodon.org, read
 * 2026-11-26): app registration (POST /api/v1/apps), the OAuth code flow (/oauth/authorize, /oauth/token
 * with authorization_code and client_credentials, /oauth/revoke), verify_credentials, the instance's
 * configuration (/api/v2/instance and /api/v1/instance), media uploaded with POST /api/v2/media and
 * processed in the background (202, then GET /api/v1/media/:id answers 206 until it is ready), statuses
 * with polls, content warnings, visibility and replies under an Idempotency-Key, the account's statuses,
 * a status and its context. It refuses what the server refuses: bad tokens (401), missing scopes (403),
 * too long a status, too many files, files not processed yet, a video beside images (422).
 *
 * Sandbox rule: one user (@sandbox), any app may be registered; the sandbox's authorize step grants
 * every scope the app asked for. Test helpers: configure() changes the instance's limits, apps() lists
 * registrations, engage() adds favourites, reblogs and replies to a status.
 */
import { randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator } from "../../src/platform/sdk.ts";
import {
  addCounts,
  emulatorState,
  failingHandler,
  FailurePlan,
  mountBase,
  OAuthServer,
  resettable,
} from "../../src/platform/emulator-kit.ts";
import { inspectMedia } from "../../src/platform/emulator-media.ts";
import type { InstanceConfiguration } from "./contract.ts";
import {
  accountJson,
  mediaEntity,
  statusEntity,
  USER,
  type App,
  type Media,
  type Status,
} from "./emulator-entities.ts";
import {
  defaultConfiguration,
  KNOWN_SCOPES,
  MastodonError,
  params,
  scopeCovers,
  statusInput,
  type EmulatedConfiguration,
} from "./emulator-rules.ts";

/** Idempotency keys are kept for an hour (methods/statuses#create). */
const IDEMPOTENCY_MS = 3_600_000;

export interface MastodonEmulator extends Emulator {
  configure(change: Partial<{ [K in keyof EmulatedConfiguration]: Partial<EmulatedConfiguration[K]> }>): void;
  apps(): { name: string; clientId: string; redirectUris: string[]; scopes: string[] }[];
  /** How many reads of a video's media answer 206 before it is processed (default 1). */
  processingReads(n: number): void;
  engage(statusId: string, counts: Partial<Status["counts"]>): void;
  revoked(): number;
}

export function createMastodonEmulator(): MastodonEmulator {
  const failures = new FailurePlan();
  const s = resettable(() => ({
    apps: {} as Record<string, App>,
    media: {} as Record<string, Media>,
    statuses: {} as Record<string, Status>,
    order: [] as string[],
    idempotency: {} as Record<string, { id: string; at: number }>,
    configuration: defaultConfiguration(),
    followers: 0,
    processingReads: 1,
    revoked: 0,
    nextId: 111_000_000_000_000,
  }));
  const oauth = new OAuthServer(
    {
      clientAuth: "body",
      grantable: KNOWN_SCOPES,
      answer: {
        token_type: "Bearer",
        get created_at() {
          return Math.floor(Date.now() / 1000);
        },
      },
      refuse: (why) =>
        why === "invalid_client"
          ? Response.json(
              {
                error: "invalid_client",
                error_description:
                  "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
              },
              { status: 401 },
            )
          : Response.json(
              {
                error: why === "unsupported_grant_type" ? "unsupported_grant_type" : "invalid_grant",
                error_description:
                  "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
              },
              { status: 400 },
            ),
    },
    {},
  );
  const newId = () => String(s.nextId++);

  const invalidToken = () => new MastodonError(401, "The access token is invalid");
  function authorized(req: Request, scope: string) {
    if (!oauth.bearer(req)) throw invalidToken();
    if (!scopeCovers(oauth.scopesOf(req), scope))
      throw new MastodonError(403, "This action is outside the authorized scopes");
  }

  const account = (base: string) => accountJson(base, s.followers, s.order.length);
  const mediaJson = (m: Media, base: string) => mediaEntity(m, base);
  const statusJson = (st: Status, base: string) => statusEntity(st, base, s.media, account(base));

  async function registerApp(req: Request): Promise<Response> {
    const p = await params(req);
    const name = typeof p.client_name === "string" ? p.client_name.trim() : "";
    const uris = (Array.isArray(p.redirect_uris) ? p.redirect_uris : String(p.redirect_uris ?? "").split(/\s+/))
      .map(String)
      .filter(Boolean);
    if (!name) throw new MastodonError(422, "Validation failed: Application name can't be blank");
    if (!uris.length || uris.some((u) => u !== "urn:ietf:wg:oauth:2.0:oob" && !/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(u)))
      throw new MastodonError(422, "Validation failed: Redirect URI must be an absolute URI.");
    const scopes = String(p.scopes ?? "read")
      .split(/\s+/)
      .filter(Boolean);
    if (scopes.some((x) => !KNOWN_SCOPES.includes(x)))
      throw new MastodonError(422, "Validation failed: Scopes are invalid");
    const clientId = randomBytes(24).toString("base64url");
    const secret = randomBytes(24).toString("base64url");
    s.apps[clientId] = { name, clientId, secret, redirectUris: uris, scopes };
    oauth.registerClient(clientId, secret);
    return Response.json({
      id: String(Object.keys(s.apps).length),
      name,
      website: typeof p.website === "string" ? p.website : null,
      scopes,
      redirect_uri: uris.join("\n"),
      redirect_uris: uris,
      client_id: clientId,
      client_secret: secret,
      client_secret_expires_at: 0,
    });
  }

  function authorize(url: URL): Response {
    const app = s.apps[url.searchParams.get("client_id") ?? ""];
    const refuse = () =>
      new MastodonError(
        400,
        "invalid_request",
        "The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.",
      );
    if (!app || !app.redirectUris.includes(url.searchParams.get("redirect_uri") ?? "")) throw refuse();
    const asked = (url.searchParams.get("scope") ?? "read").split(/[\s+]+/).filter(Boolean);
    if (asked.some((x) => !app.scopes.includes(x)))
      throw new MastodonError(400, "invalid_scope", "The requested scope is invalid, unknown, or malformed.");
    return oauth.authorize(url, refuse);
  }

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.clone().text());
    if (form.get("grant_type") !== "client_credentials") return oauth.token(req);
    // An app token, issued only to a client the server knows (methods/oauth#token).
    const app = s.apps[form.get("client_id") ?? ""];
    if (!app || app.secret !== form.get("client_secret"))
      return Response.json(
        { error: "invalid_client", error_description: "Client authentication failed due to unknown client." },
        { status: 401 },
      );
    return Response.json({
      access_token: randomBytes(24).toString("base64url"),
      token_type: "Bearer",
      scope: form.get("scope") ?? "read",
      created_at: Math.floor(Date.now() / 1000),
    });
  }

  async function upload(req: Request, base: string): Promise<Response> {
    authorized(req, "write:media");
    const form = await req.formData().catch(() => null);
    const file = form?.get("file");
    if (!(file instanceof Blob) || !file.type)
      throw new MastodonError(422, "Validation failed: File content type is invalid, File is invalid");
    const conf = s.configuration.media_attachments;
    const bytes = new Uint8Array(await file.arrayBuffer());
    const seen = inspectMedia(bytes);
    const type = seen.mime ?? file.type;
    if (!conf.supported_mime_types.includes(type) || !conf.supported_mime_types.includes(file.type))
      throw new MastodonError(422, "Validation failed: File content type is invalid, File is invalid");
    const video = type.startsWith("video/");
    if (bytes.byteLength > (video ? conf.video_size_limit : conf.image_size_limit))
      throw new MastodonError(
        422,
        `Validation failed: File file size must be less than ${video ? conf.video_size_limit : conf.image_size_limit} Bytes`,
      );
    const pixels = (seen.width ?? 0) * (seen.height ?? 0);
    if (pixels > (video ? conf.video_matrix_limit : conf.image_matrix_limit))
      throw new MastodonError(422, "Validation failed: File dimensions are too large");
    const description = typeof form?.get("description") === "string" ? (form.get("description") as string) : null;
    if (description && [...description].length > conf.description_limit)
      throw new MastodonError(
        422,
        `Validation failed: Description is too long (maximum is ${conf.description_limit} characters)`,
      );
    const m: Media = {
      id: newId(),
      type: video ? "video" : type === "image/gif" ? "gifv" : "image",
      contentType: type,
      size: bytes.byteLength,
      description,
      pendingReads: video || type === "image/gif" ? s.processingReads : 0,
      statusId: null,
    };
    s.media[m.id] = m;
    // Images are processed at once (200, since 4.0); video and GIFs in the background (202, url null).
    return Response.json(mediaJson(m, base), { status: m.pendingReads > 0 ? 202 : 200 });
  }

  function readMedia(req: Request, id: string, base: string): Response {
    authorized(req, "write:media");
    const m = s.media[id];
    if (!m) throw new MastodonError(404, "Record not found");
    if (m.pendingReads > 0) {
      m.pendingReads -= 1;
      return new Response(null, { status: 206 });
    }
    return Response.json(mediaJson(m, base));
  }

  async function createStatus(req: Request, base: string): Promise<Response> {
    authorized(req, "write:statuses");
    const key = req.headers.get("idempotency-key");
    const known = key ? s.idempotency[key] : undefined;
    if (known && Date.now() - known.at < IDEMPOTENCY_MS && s.statuses[known.id])
      return Response.json(statusJson(s.statuses[known.id], base));
    const input = statusInput(await params(req), s.configuration);
    const media = input.mediaIds.map((id) => s.media[id]);
    if (media.some((m) => !m || m.statusId))
      throw new MastodonError(422, "Validation failed: Media attachments not found");
    if (media.length > 1 && media.some((m) => m.type !== "image"))
      throw new MastodonError(422, "Validation failed: Cannot attach a video to a post that already contains images");
    if (media.some((m) => m.pendingReads > 0))
      throw new MastodonError(
        422,
        "Validation failed: Cannot attach files that have not finished processing. Try again in a moment!",
      );
    if (input.inReplyTo && !s.statuses[input.inReplyTo]) throw new MastodonError(404, "Record not found");
    const st: Status = {
      id: newId(),
      input,
      media: input.mediaIds,
      createdAt: new Date().toISOString(),
      counts: { favourites: 0, reblogs: 0, replies: 0 },
    };
    for (const m of media) m.statusId = st.id;
    s.statuses[st.id] = st;
    s.order.push(st.id);
    if (input.inReplyTo) s.statuses[input.inReplyTo].counts.replies += 1;
    if (key) s.idempotency[key] = { id: st.id, at: Date.now() };
    return Response.json(statusJson(st, base));
  }

  function accountStatuses(req: Request, url: URL, base: string): Response {
    authorized(req, "read:statuses");
    const limit = Math.min(40, Number(url.searchParams.get("limit") ?? 20) || 20);
    const noReplies = url.searchParams.get("exclude_replies") === "true";
    const list = [...s.order]
      .reverse()
      .map((id) => s.statuses[id])
      .filter((st) => !noReplies || !st.input.inReplyTo || s.statuses[st.input.inReplyTo])
      .slice(0, limit);
    return Response.json(list.map((st) => statusJson(st, base)));
  }

  function descendants(id: string): Status[] {
    const kids = s.order.map((x) => s.statuses[x]).filter((st) => st.input.inReplyTo === id);
    return kids.flatMap((k) => [k, ...descendants(k.id)]);
  }

  function instance(base: string, v2: boolean) {
    const configuration = s.configuration satisfies Partial<InstanceConfiguration>;
    const host = new URL(base).host;
    return v2
      ? { domain: host, title: "Crier's Mastodon emulator", version: "4.5.0", configuration }
      : { uri: host, title: "Crier's Mastodon emulator", version: "4.5.0", configuration };
  }

  async function route(req: Request, path: string): Promise<Response> {
    const url = new URL(req.url);
    const base = mountBase(req, path);
    const m = req.method;
    if (m === "POST" && path === "/api/v1/apps") return registerApp(req);
    if (m === "GET" && path === "/oauth/authorize") return authorize(url);
    if (m === "POST" && path === "/oauth/token") return token(req);
    if (m === "POST" && path === "/oauth/revoke") {
      s.revoked += 1;
      return Response.json({});
    }
    if (m === "GET" && path === "/api/v2/instance") return Response.json(instance(base, true));
    if (m === "GET" && path === "/api/v1/instance") return Response.json(instance(base, false));
    if (m === "GET" && path === "/api/v1/accounts/verify_credentials") {
      if (!oauth.bearer(req)) throw invalidToken();
      if (!["read:accounts", "profile"].some((x) => scopeCovers(oauth.scopesOf(req), x)))
        throw new MastodonError(403, "This action is outside the authorized scopes");
      return Response.json({
        ...account(base),
        source: { privacy: "public", sensitive: false, language: "en", note: "" },
      });
    }
    if (m === "POST" && path === "/api/v2/media") return upload(req, base);
    let hit = /^\/api\/v1\/media\/([^/]+)$/.exec(path);
    if (m === "GET" && hit) return readMedia(req, hit[1], base);
    if (m === "POST" && path === "/api/v1/statuses") return createStatus(req, base);
    hit = /^\/api\/v1\/accounts\/([^/]+)\/statuses$/.exec(path);
    if (m === "GET" && hit) {
      if (hit[1] !== USER.id) throw new MastodonError(404, "Record not found");
      return accountStatuses(req, url, base);
    }
    hit = /^\/api\/v1\/statuses\/([^/]+)(\/context)?$/.exec(path);
    if (m === "GET" && hit) {
      authorized(req, "read:statuses");
      const st = s.statuses[hit[1]];
      if (!st) throw new MastodonError(404, "Record not found");
      if (!hit[2]) return Response.json(statusJson(st, base));
      const ancestors: Status[] = [];
      for (let p = st.input.inReplyTo; p && s.statuses[p]; p = s.statuses[p].input.inReplyTo)
        ancestors.unshift(s.statuses[p]);
      return Response.json({
        ancestors: ancestors.map((x) => statusJson(x, base)),
        descendants: descendants(st.id).map((x) => statusJson(x, base)),
      });
    }
    throw new MastodonError(404, "Record not found");
  }

  const errorResponse = (e: MastodonError) =>
    Response.json(
      { error: e.message, ...(e.description && { error_description: e.description }) },
      { status: e.status },
    );

  const { handle, failNext } = failingHandler({
    failures,
    // Failures apply to the API calls Crier makes for an account, not to sign-in or the public instance read.
    canFail: (path) => path.startsWith("/api/") && !path.includes("/instance") && path !== "/api/v1/apps",
    failureResponse: (f) =>
      f.kind === "rate_limit"
        ? Response.json(
            { error: "Too many requests" },
            {
              status: 429,
              headers: {
                "x-ratelimit-limit": "300",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset": new Date(Date.now() + (f.retryAfterSeconds ?? 60) * 1000).toISOString(),
              },
            },
          )
        : f.kind === "server_error"
          ? Response.json({ error: "We're sorry, but something went wrong on our end." }, { status: 503 })
          : f.kind === "auth_expired"
            ? errorResponse(invalidToken())
            : f.kind === "forbidden"
              ? errorResponse(new MastodonError(403, "This action is outside the authorized scopes"))
              : null,
    route,
    error: MastodonError,
    errorResponse,
  });

  return {
    platform: "mastodon",
    handle,
    failNext,
    state: emulatorState({ s, oauth }),
    posts(): EmulatedPost[] {
      return s.order.map((id) => {
        const st = s.statuses[id];
        return {
          id,
          text: st.input.status,
          media: st.media.map((mid) => {
            const m = s.media[mid];
            return {
              type: m.type,
              contentType: m.contentType,
              size: m.size,
              ...(m.description && { alt: m.description }),
            };
          }),
          replyTo: st.input.inReplyTo,
          options: {
            visibility: st.input.visibility,
            ...(st.input.spoiler && { spoiler_text: st.input.spoiler }),
            ...(st.input.language && { language: st.input.language }),
            ...(st.input.poll && { poll: st.input.poll }),
            sensitive: st.input.sensitive,
          },
          createdAt: new Date(st.createdAt),
        };
      });
    },
    setFollowers(count) {
      s.followers = count;
    },
    configure(change) {
      for (const [k, v] of Object.entries(change))
        Object.assign(s.configuration[k as keyof EmulatedConfiguration], v as object);
    },
    apps: () => Object.values(s.apps).map(({ secret: _secret, ...a }) => a),
    processingReads(n) {
      s.processingReads = n;
    },
    engage(statusId, counts) {
      addCounts(s.statuses[statusId].counts, counts);
    },
    revoked: () => s.revoked,
    reset() {
      s.reset();
      oauth.reset();
      failures.clear();
    },
  };
}

export default defineEmulator(() => createMastodonEmulator());
