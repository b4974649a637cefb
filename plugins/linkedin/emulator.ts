/**
 * An emulator of the LinkedIn surface the plugin uses: OAuth (authorize, access token with id and
 * secret in the form), OpenID userinfo, the versioned REST API (LinkedIn-Version and the Rest.li 2.0.0
 * header required): Images and Videos initializeUpload with upload URLs, multi-part video uploads with
 * ETags and finalize, processing over status reads, Posts (201 with x-restli-id, commentary limits,
 * media references owned by the author), comments under a post (Comments API; read back with
 * r_member_social only) and social action counts (with r_member_social only), posts by author, and
 * company pages (emulator-organizations.ts: who administers which, acting as one, its statistics). Versions
 * outside LinkedIn's support window are refused with 426 NONEXISTENT_VERSION. Errors are `{status, code, message}`.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the member "Sandbox Member", who
 * administers one company page, "Sandbox Company".
 */
import { breach, inspectMedia, joinParts, type MediaRule } from "../../src/platform/emulator-media.ts";
import { createHash, randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import {
  assertOrganizationRole,
  organizationRoute,
  sandboxOrganizations,
  type OrgContext,
  type ShareCounts,
} from "./emulator-organizations.ts";
import { error, failureResponse, LiError, versionProblem } from "./emulator-errors.ts";

const PART_BYTES = 4 * 1024 * 1024;

/**
 * Reading a member's likes and comments (Social Actions) needs r_member_social, which LinkedIn grants to
 * approved developers only (learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/
 * posts-api, "Permissions", checked 2026-11-26); without it the answer is 403 ACCESS_DENIED.
 */
const READ_SCOPE = "r_member_social";
/** Creating posts and uploading their media needs w_member_social (same page, "Permissions"). */
const WRITE_SCOPE = "w_member_social";
const ACCESS_TTL_MS = 60 * 86400_000;
/**
 * Comments API (learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api,
 * read 2026-11-26): `POST /rest/socialActions/{shareUrn|ugcPostUrn}/comments` with `actor` (the member),
 * `object` (the post) and `message.text`, under w_member_social; 201 with the comment (its `commentUrn`,
 * `urn:li:comment:(<object>,<id>)`) and its id in x-restli-id. Reading comments back (GET on the same
 * resource) needs r_member_social. The page documents no length for message.text: the emulator refuses
 * past 1,250 characters, the comment box's limit Crier declares.
 */
const COMMENT_MAX = 1250;

// Images API (learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api,
// checked 2026-11-26): JPG, GIF or PNG, fewer than 36,152,320 pixels. Videos API (…/shares/videos-api,
// checked 2026-11-26): MP4, 3 seconds to 30 minutes, 75 KB to 500 MB (the size is checked at
// initializeUpload). A file out of spec ends PROCESSING_FAILED, and a post cannot use it.
const IMAGE_RULE: MediaRule = { types: ["image/jpeg", "image/gif", "image/png"], maxPixels: 36_152_320 - 1 };
const VIDEO_RULE: MediaRule = { types: ["video/mp4"], minDuration: 3, maxDuration: 30 * 60 };
/** Videos up to this size are kept whole until finalized; a larger one keeps its first part only (memory). */
const KEEP_VIDEO_BYTES = 256 * 1024 * 1024;

interface Asset {
  urn: string;
  owner: string;
  kind: "image" | "video";
  size: number;
  parts: Map<number, string>;
  received: number;
  status: "WAITING_UPLOAD" | "PROCESSING" | "AVAILABLE" | "PROCESSING_FAILED";
  reads: number;
  /** The parts received, kept to read the file once it is in (a large video keeps its first part only). */
  chunks: Map<number, Uint8Array | null>;
  token: string;
}
interface LiComment {
  id: string;
  urn: string;
  object: string;
  actor: string;
  text: string;
  createdAt: Date;
}
interface Post extends ShareCounts {
  urn: string;
  author: string;
  commentary: string;
  /** The content as it was sent, for reads of the post. */
  content: unknown;
  media: string[];
  createdAt: Date;
}

export interface LinkedInEmulator extends Emulator {
  engage(urn: string, counts: Partial<ShareCounts>): void;
}

export function createLinkedInEmulator(): LinkedInEmulator {
  const failures = new FailurePlan();
  const oauth = new OAuthServer({
    clientAuth: "body",
    accessTtlS: ACCESS_TTL_MS / 1000,
    newToken: () => `AQ${randomBytes(24).toString("base64url")}`,
    // The sandbox app is one LinkedIn approved for r_member_social and the Community Management API (the
    // organization scopes), so sandbox posts show their numbers and its member's company page connects:
    // tokens of the sandbox's consent-less codes hold these scopes; a real consent grants what it asked for.
    answer: {
      scope:
        "openid,profile,r_member_social,w_member_social,w_organization_social,r_organization_social,rw_organization_admin",
      token_type: "Bearer",
      id_token: "x",
    },
    refuse: (why) =>
      why === "invalid_client"
        ? Response.json({ error: why, error_description: "Client authentication failed" }, { status: 401 })
        : Response.json(
            {
              error: "invalid_request",
              error_description: "Unable to retrieve access token: authorization code not found",
            },
            { status: 400 },
          ),
  });
  const state = resettable(() => ({
    assets: new Map<string, Asset>(),
    posts: [] as Post[],
    comments: [] as LiComment[],
    emulated: [] as EmulatedPost[],
    /** The follower count of every company page (setFollowers). */
    followers: 0,
  }));
  const member = { sub: "sandboxMember01", name: "Sandbox Member", picture: "https://media.licdn.com/sandbox.jpg" };
  const author = `urn:li:person:${member.sub}`;
  const organizations = sandboxOrganizations(author);
  const orgContext = (req: Request): OrgContext => ({
    member: author,
    organizations,
    granted: (scope) => oauth.granted(req, scope),
    posts: () => state.posts,
    followers: () => state.followers,
  });

  /**
   * Whether the token may create for this author: the member itself with w_member_social, or a company
   * page the member administers with w_organization_social (Posts API "Permissions", 2026-11-26).
   */
  function actAs(req: Request, urn: unknown, what: string): string {
    if (urn === author) {
      if (!oauth.granted(req, WRITE_SCOPE))
        throw new LiError(403, `Not enough permissions to access: ${what}.CREATE.NO_VERSION`, "ACCESS_DENIED");
      return author;
    }
    if (typeof urn === "string" && urn.startsWith("urn:li:organization:")) {
      assertOrganizationRole(orgContext(req), urn, "w_organization_social", `${what}.CREATE.NO_VERSION`);
      return urn;
    }
    throw new LiError(
      403,
      `The author must be the authenticated member or a page it administers (${what})`,
      "ACCESS_DENIED",
    );
  }

  /** Reading an author's posts or comments: r_member_social for the member, r_organization_social for its page. */
  function mayRead(req: Request, urn: string, what: string): void {
    if (urn === author) {
      if (!oauth.granted(req, READ_SCOPE))
        throw new LiError(403, `Not enough permissions to access: ${what}`, "ACCESS_DENIED");
      return;
    }
    assertOrganizationRole(orgContext(req), urn, "r_organization_social", what);
  }

  function authed(req: Request, rest: boolean) {
    if (!oauth.bearer(req)) throw new LiError(401, "Invalid access token", "REVOKED_ACCESS_TOKEN");
    if (rest) {
      const version = versionProblem(req.headers.get("linkedin-version"), new Date());
      if (version) throw version;
      if (req.headers.get("x-restli-protocol-version") !== "2.0.0")
        throw new LiError(400, "X-Restli-Protocol-Version 2.0.0 is required");
    }
  }

  /** The post a comment call names: 404 when LinkedIn has no such share or ugcPost. */
  function commentParent(urn: string): Post {
    const p = state.posts.find((x) => x.urn === urn);
    if (!p) throw new LiError(404, `Not found: ${urn}`, "NOT_FOUND");
    return p;
  }

  const commentJson = (c: LiComment) => ({
    actor: c.actor,
    object: c.object,
    message: { text: c.text, attributes: [] },
    created: { actor: c.actor, time: c.createdAt.getTime() },
    lastModified: { actor: c.actor, time: c.createdAt.getTime() },
    id: c.id,
    commentUrn: c.urn,
    $URN: c.urn,
  });

  async function comment(req: Request, parentUrn: string): Promise<Response> {
    const p = commentParent(parentUrn);
    const b = (await req.json().catch(() => null)) as {
      actor?: string;
      object?: string;
      message?: { text?: unknown };
    } | null;
    const actor = actAs(req, b?.actor, "socialActions");
    if (!b) throw new LiError(400, "A JSON body is required");
    if (b.object !== p.urn) throw new LiError(400, "object must be the entity in the path", "BAD_REQUEST");
    const text = b.message?.text;
    if (typeof text !== "string" || !text.trim())
      throw new LiError(422, "message.text is required", "UNPROCESSABLE_ENTITY");
    if ([...text].length > COMMENT_MAX)
      throw new LiError(422, `message.text is longer than ${COMMENT_MAX} characters`, "UNPROCESSABLE_ENTITY");
    const id = String(7_100_000_000_000_000_000n + BigInt(randomBytes(6).readUIntBE(0, 6)));
    const c: LiComment = {
      id,
      urn: `urn:li:comment:(${p.urn},${id})`,
      object: p.urn,
      actor,
      text,
      createdAt: new Date(),
    };
    state.comments.push(c);
    p.comments += 1;
    state.emulated.push({ id: c.urn, text, media: [], replyTo: p.urn, createdAt: c.createdAt });
    return Response.json(commentJson(c), { status: 201, headers: { "x-restli-id": id } });
  }

  function listComments(req: Request, url: URL, parentUrn: string): Response {
    const p = commentParent(parentUrn);
    mayRead(req, p.author, "socialActions.GET_ALL.NO_VERSION");
    const all = state.comments.filter((c) => c.object === p.urn).reverse();
    const start = Number(url.searchParams.get("start") ?? 0);
    const count = Number(url.searchParams.get("count") ?? 10);
    const shown = all.slice(start, start + count);
    return Response.json({ elements: shown.map(commentJson), paging: { start, count, total: all.length } });
  }

  /**
   * Posts API "Find Posts by Authors": `q=author&author={urn}`, newest first, with `count` and `start`
   * (learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api, 2026-11-26).
   */
  function postsByAuthor(req: Request, url: URL): Response {
    if (url.searchParams.get("q") !== "author") throw new LiError(400, "q must be author", "BAD_REQUEST");
    const who = url.searchParams.get("author") ?? "";
    mayRead(req, who, "posts.FINDER-author.NO_VERSION");
    const all = state.posts.filter((p) => p.author === who).reverse();
    const start = Number(url.searchParams.get("start") ?? 0);
    const count = Math.min(Number(url.searchParams.get("count") ?? 10), 100);
    const elements = all.slice(start, start + count).map((p) => ({
      id: p.urn,
      author: p.author,
      commentary: p.commentary,
      visibility: "PUBLIC",
      lifecycleState: "PUBLISHED",
      createdAt: p.createdAt.getTime(),
      publishedAt: p.createdAt.getTime(),
      lastModifiedAt: p.createdAt.getTime(),
      ...(p.content ? { content: p.content } : {}),
    }));
    return Response.json({ elements, paging: { start, count, total: all.length } });
  }

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return oauth.authorize(url, () => new LiError(400, "client_id and redirect_uri are required"));
    if (m === "POST" && (path === "/oauth/v2/accessToken" || path === "/oauth/token")) return oauth.token(req);
    const upload = /^\/upload\/([a-f0-9]+)\/(\d+)$/.exec(path);
    if (upload && m === "PUT") {
      authed(req, false);
      const a = [...state.assets.values()].find((x) => x.token === upload[1]);
      if (!a) throw new LiError(404, "Upload URL not found");
      const bytes = new Uint8Array(await req.arrayBuffer());
      const index = Number(upload[2]);
      if (index === 0 || a.size <= KEEP_VIDEO_BYTES) a.chunks.set(index, bytes);
      a.received += bytes.length;
      const etag = `"${createHash("md5").update(bytes).digest("hex")}"`;
      a.parts.set(index, etag);
      if (a.kind === "image") a.status = breach(inspectMedia(bytes), IMAGE_RULE) ? "PROCESSING_FAILED" : "AVAILABLE";
      return new Response(null, { status: 201, headers: { etag } });
    }
    if (m === "GET" && path === "/v2/userinfo") {
      authed(req, false);
      return Response.json({ ...member, given_name: "Sandbox", family_name: "Member", email_verified: true });
    }
    authed(req, true);
    const answered = organizationRoute(orgContext(req), m, path, url);
    if (answered) return answered;
    if (
      m === "POST" &&
      (path === "/rest/images" || path === "/rest/videos") &&
      url.searchParams.get("action") === "initializeUpload"
    ) {
      const b = (await req.json().catch(() => null)) as {
        initializeUploadRequest?: { owner?: string; fileSizeBytes?: number };
      } | null;
      const kind = path === "/rest/images" ? "image" : "video";
      const owner = actAs(req, b?.initializeUploadRequest?.owner, `${kind}s`);
      const a: Asset = {
        urn: `urn:li:${kind}:C${randomBytes(8).toString("hex")}`,
        owner,
        kind,
        size: 0,
        parts: new Map(),
        received: 0,
        status: "WAITING_UPLOAD",
        reads: 0,
        chunks: new Map(),
        token: randomBytes(10).toString("hex"),
      };
      state.assets.set(a.urn, a);
      if (kind === "image")
        return Response.json({
          value: { uploadUrlExpiresAt: Date.now() + 86400_000, uploadUrl: `${base}/upload/${a.token}/0`, image: a.urn },
        });
      const size = Number(b?.initializeUploadRequest?.fileSizeBytes);
      if (!Number.isInteger(size) || size < 75 * 1024 || size > 500 * 1024 * 1024)
        throw new LiError(400, "fileSizeBytes must be between 75 KB and 500 MB");
      a.size = size;
      const parts = Math.ceil(size / PART_BYTES);
      return Response.json({
        value: {
          video: a.urn,
          uploadToken: a.token,
          uploadUrlsExpireAt: Date.now() + 86400_000,
          uploadInstructions: Array.from({ length: parts }, (_, i) => ({
            uploadUrl: `${base}/upload/${a.token}/${i}`,
            firstByte: i * PART_BYTES,
            lastByte: Math.min(size, (i + 1) * PART_BYTES) - 1,
          })),
        },
      });
    }
    if (m === "POST" && path === "/rest/videos" && url.searchParams.get("action") === "finalizeUpload") {
      const b = (await req.json().catch(() => null)) as {
        finalizeUploadRequest?: { video?: string; uploadToken?: string; uploadedPartIds?: string[] };
      } | null;
      const a = state.assets.get(b?.finalizeUploadRequest?.video ?? "");
      if (!a || a.token !== b?.finalizeUploadRequest?.uploadToken)
        throw new LiError(400, "Unknown video or upload token");
      actAs(req, a.owner, "videos");
      const ids = b.finalizeUploadRequest.uploadedPartIds ?? [];
      if (a.received !== a.size || ids.length !== a.parts.size || ids.some((id, i) => a.parts.get(i) !== id))
        throw new LiError(400, "uploadedPartIds do not match the uploaded parts");
      const refused = breach({ ...inspectMedia(joinParts(a.chunks)), bytes: a.size }, VIDEO_RULE);
      a.chunks.clear();
      a.status = refused ? "PROCESSING_FAILED" : "PROCESSING";
      return Response.json({});
    }
    const video = /^\/rest\/videos\/(.+)$/.exec(path);
    if (m === "GET" && video) {
      const a = state.assets.get(decodeURIComponent(video[1]));
      if (!a) throw new LiError(404, "Video not found");
      if (a.status === "PROCESSING" && ++a.reads >= 2) a.status = "AVAILABLE";
      return Response.json({ id: a.urn, status: a.status, owner: a.owner });
    }
    if (m === "POST" && path === "/rest/posts") {
      const b = (await req.json().catch(() => null)) as {
        author?: string;
        commentary?: string;
        visibility?: string;
        lifecycleState?: string;
        distribution?: unknown;
        content?: {
          media?: { id: string; altText?: unknown };
          multiImage?: { images: { id: string; altText?: unknown }[] };
        };
      } | null;
      const postAuthor = actAs(req, b?.author, "posts");
      if (!b) throw new LiError(400, "A JSON body is required");
      if (typeof b.commentary !== "string" || [...b.commentary].length > 3000 * 2)
        throw new LiError(422, "commentary is missing or too long", "UNPROCESSABLE_ENTITY");
      if (!b.visibility || b.lifecycleState !== "PUBLISHED" || !b.distribution)
        throw new LiError(
          422,
          "visibility, distribution and lifecycleState PUBLISHED are required",
          "UNPROCESSABLE_ENTITY",
        );
      const parts = b.content?.media ? [b.content.media] : (b.content?.multiImage?.images ?? []);
      const media = parts.map((i) => i.id);
      // altText: a string of at most 4086 characters (Posts API, MediaContent and MultiImage;
      // learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api, 2026-11-26).
      for (const [i, part] of parts.entries())
        if (part.altText !== undefined && (typeof part.altText !== "string" || [...part.altText].length > 4086))
          throw new LiError(
            422,
            `content image ${i}: altText must be a string of at most 4086 characters`,
            "UNPROCESSABLE_ENTITY",
          );
      if (b.content?.multiImage && (media.length < 2 || media.length > 20))
        throw new LiError(422, "multiImage takes 2 to 20 images", "UNPROCESSABLE_ENTITY");
      for (const id of media) {
        const a = state.assets.get(id);
        if (!a || a.owner !== postAuthor || a.status !== "AVAILABLE")
          throw new LiError(422, `${id} is not an available asset of the author`, "UNPROCESSABLE_ENTITY");
      }
      const post: Post = {
        urn: `urn:li:share:${7_000_000_000_000_000_000n + BigInt(randomBytes(6).readUIntBE(0, 6))}`,
        author: postAuthor,
        commentary: b.commentary,
        content: b.content,
        media,
        createdAt: new Date(),
        impressions: 0,
        clicks: 0,
        likes: 0,
        comments: 0,
        shares: 0,
      };
      state.posts.push(post);
      // What a reader sees: little-text escapes removed.
      state.emulated.push({
        id: post.urn,
        text: b.commentary.replace(/\\(.)/g, "$1"),
        media: parts.map((p) => ({
          type: state.assets.get(p.id)!.kind,
          ...(typeof p.altText === "string" && { alt: p.altText }),
        })),
        createdAt: post.createdAt,
      });
      return new Response(null, { status: 201, headers: { "x-restli-id": post.urn } });
    }
    if (m === "GET" && path === "/rest/posts") return postsByAuthor(req, url);
    const comments = /^\/rest\/socialActions\/([^/]+)\/comments$/.exec(path);
    if (comments && m === "POST") return comment(req, decodeURIComponent(comments[1]));
    if (comments && m === "GET") return listComments(req, url, decodeURIComponent(comments[1]));
    const social = /^\/rest\/socialActions\/(.+)$/.exec(path);
    if (m === "GET" && social) {
      if (!oauth.granted(req, READ_SCOPE))
        throw new LiError(403, "Not enough permissions to access: socialActions.GET.NO_VERSION", "ACCESS_DENIED");
      const p = state.posts.find((x) => x.urn === decodeURIComponent(social[1]));
      if (!p) throw new LiError(404, "Not found");
      return Response.json({
        target: p.urn,
        likesSummary: { totalLikes: p.likes },
        commentsSummary: { aggregatedTotalComments: p.comments },
      });
    }
    throw new LiError(404, `No route ${m} ${path}`, "NOT_FOUND");
  }

  return {
    platform: "linkedin",
    state: emulatorState({ state, oauth }),
    // Company pages on: the sandbox member administers one, which connects beside the member.
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox", ORGANIZATIONS: "true" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/rest/"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: LiError,
      errorResponse: (e) => error(e.status, e.message, e.code),
    }),
    posts: () => [...state.emulated],
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
    setFollowers(n) {
      state.followers = n;
    },
    engage(urn, counts) {
      const p = state.posts.find((x) => x.urn === urn);
      if (!p) throw new Error(`no post ${urn}`);
      addCounts(p, counts);
    },
  };
}

export default defineEmulator(() => createLinkedInEmulator());
