/**
 * An emulator of the Reddit surface the plugin uses: OAuth (authorize, access_token with Basic client
 * auth, permanent refresh tokens), the User-Agent Reddit's rules require (token endpoint included), /api/v1/me, /api/submit (self, link, image;
 * 200 with json.errors for refusals such as SUBREDDIT_NOEXIST, NO_SELFS, NO_LINKS, a missing title or
 * a title over 300), /api/comment (10,000 characters), the media asset lease and its S3-style upload answering an XML
 * Location, gallery posts, the user's submissions and /api/info. An image submit answers without the
 * post's id, as Reddit does. Flair and markings of a submit (flair_id, flair_text, nsfw, spoiler,
 * sendreplies) are kept on the post: in the listing and in posts()' options.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user sandbox_redditor; every
 * subreddit exists except names containing "noexist"; "selfonly" refuses links and images, "linksonly"
 * refuses self posts.
 */
import { randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";

const ACCESS_TTL_S = 3600;
/**
 * Reddit's API rules (github.com/reddit-archive/reddit/wiki/API, "Rules", checked 2026-11-26): the
 * User-Agent is `<platform>:<app ID>:<version string> (by /u/<reddit username>)`, and default agents are
 * "drastically limited". The emulator answers 429 to any other agent, on the token endpoint and the API
 * alike (Reddit throttles rather than refuses outright: the stricter rule makes a wrong agent visible).
 */
const USER_AGENT = /^[^\s:]+:[^\s:]+:[^\s:]+ \(by \/u\/[A-Za-z0-9_-]{3,20}\)$/;
/**
 * The OAuth scope each endpoint needs, as reddit.com/dev/api lists it beside the endpoint (checked
 * 2026-11-26); without it Reddit answers 403 with `WWW-Authenticate: Bearer realm="reddit",
 * error="insufficient_scope"`. The media asset and gallery endpoints are not in the reference: submit.
 */
const SCOPE_OF: [RegExp, string][] = [
  [/^GET \/api\/v1\/me$/, "identity"],
  [/^POST \/api\/(submit|comment|media\/asset\.json|submit_gallery_post\.json)$/, "submit"],
  [/^GET \/user\/[^/]+\/submitted$/, "history"],
  [/^GET \/api\/info$/, "read"],
];

/** A comment's body: Reddit answers TOO_LONG "this is too long (max: 10000)" (checked 2026-11-26). */
const COMMENT_MAX = 10000;

/** Flair and markings a submit carries (flair_id, flair_text, nsfw, spoiler, sendreplies). */
interface Marks {
  flairId: string | null;
  flairText: string | null;
  nsfw: boolean;
  spoiler: boolean;
  sendReplies: boolean;
}
interface Post extends Marks {
  name: string;
  sr: string;
  title: string;
  kind: "self" | "link" | "image" | "gallery";
  text: string;
  url: string | null;
  images: number;
  createdUtc: number;
  ups: number;
  comments: number;
}

/** Reddit reads booleans of a form as "true"/"false" and of a JSON body as booleans; absent is false, sendreplies true. */
function marksOf(get: (k: string) => unknown): Marks {
  const flag = (k: string, absent: boolean) => {
    const v = get(k);
    return v === undefined || v === null ? absent : v === true || v === "true";
  };
  const str = (k: string) => (typeof get(k) === "string" && get(k) !== "" ? String(get(k)) : null);
  return {
    flairId: str("flair_id"),
    flairText: str("flair_text"),
    nsfw: flag("nsfw", false),
    spoiler: flag("spoiler", false),
    sendReplies: flag("sendreplies", true),
  };
}
interface Comment {
  name: string;
  parent: string;
  text: string;
}

export interface RedditEmulator extends Emulator {
  engage(name: string, counts: { ups?: number }): void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const b36 = () => BigInt(`0x${randomBytes(5).toString("hex")}`).toString(36);
const slug = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_|_$/g, "")
    .slice(0, 50);

export function createRedditEmulator(): RedditEmulator {
  const failures = new FailurePlan();
  const oauth = new OAuthServer({
    clientAuth: "basic",
    accessTtlS: ACCESS_TTL_S,
    refresh: "kept",
    newToken: (kind) => (kind === "access" ? `eyJ${randomBytes(20).toString("hex")}` : randomBytes(16).toString("hex")),
    answer: { token_type: "bearer", scope: "identity submit read history flair" },
    // Reddit refuses a grant with 200 and an error field.
    refuse: (why) =>
      why === "invalid_client"
        ? Response.json({ message: "Unauthorized", error: 401 }, { status: 401 })
        : Response.json({ error: why === "unsupported_grant_type" ? why : "invalid_grant" }),
  });
  const state = resettable(() => ({
    assets: new Map<string, { key: string; uploaded: boolean; type: string }>(),
    posts: [] as Post[],
    comments: [] as Comment[],
    emulated: [] as EmulatedPost[],
  }));
  const user = {
    id: "sbx1",
    name: "sandbox_redditor",
    icon_img: "https://styles.redditmedia.com/sandbox.png?width=256",
  };

  const errors = (...errs: [string, string, string][]) => Response.json({ json: { errors: errs } });

  function agent(req: Request) {
    if (!USER_AGENT.test(req.headers.get("user-agent") ?? "")) throw new HttpError(429, "Too Many Requests");
  }

  function authed(req: Request, path: string) {
    agent(req);
    if (!oauth.bearer(req)) throw new HttpError(401, "Unauthorized");
    const scope = SCOPE_OF.find(([re]) => re.test(`${req.method} ${path}`))?.[1];
    if (scope && !oauth.granted(req, scope)) throw new HttpError(403, "Forbidden");
  }

  function subredditProblem(sr: string, kind: Post["kind"]): [string, string, string] | null {
    if (!/^[A-Za-z0-9_]{2,21}$/.test(sr) || sr.toLowerCase().includes("noexist"))
      return ["SUBREDDIT_NOEXIST", "that subreddit doesn't exist", "sr"];
    if (sr.toLowerCase() === "selfonly" && kind !== "self")
      return ["NO_LINKS", "that subreddit only allows text posts", "sr"];
    if (sr.toLowerCase() === "linksonly" && kind === "self")
      return ["NO_SELFS", "that subreddit doesn't allow text posts", "sr"];
    return null;
  }

  function addPost(p: Omit<Post, "name" | "createdUtc" | "ups" | "comments">): Post {
    const post: Post = { ...p, name: `t3_${b36()}`, createdUtc: Math.floor(Date.now() / 1000), ups: 1, comments: 0 };
    state.posts.push(post);
    state.emulated.push({
      id: post.name,
      text: `${post.title}\n${post.text}`,
      media: Array.from({ length: post.images }, () => ({ type: "image" })),
      createdAt: new Date(post.createdUtc * 1000),
      options: {
        subreddit: post.sr,
        flair_id: post.flairId,
        flair_text: post.flairText,
        nsfw: post.nsfw,
        spoiler: post.spoiler,
        sendreplies: post.sendReplies,
      },
    });
    return post;
  }

  const permalink = (p: Post) => `/r/${p.sr}/comments/${p.name.slice(3)}/${slug(p.title)}/`;
  const listingItem = (p: Post) => ({
    kind: "t3",
    data: {
      name: p.name,
      id: p.name.slice(3),
      title: p.title,
      subreddit: p.sr,
      selftext: p.kind === "self" ? p.text : "",
      url: p.url ?? `https://www.reddit.com${permalink(p)}`,
      permalink: permalink(p),
      created_utc: p.createdUtc,
      is_video: false,
      over_18: p.nsfw,
      spoiler: p.spoiler,
      send_replies: p.sendReplies,
      link_flair_template_id: p.flairId,
      link_flair_text: p.flairText,
      ...(p.kind === "image" && { post_hint: "image" }),
      is_gallery: p.kind === "gallery",
      ups: p.ups,
      score: p.ups,
      num_comments: p.comments,
    },
  });

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && (path === "/oauth/authorize" || path === "/api/v1/authorize"))
      return oauth.authorize(url, () => new HttpError(400, "invalid client_id or redirect_uri"));
    if (m === "POST" && (path === "/api/v1/access_token" || path === "/oauth/token")) {
      agent(req);
      return oauth.token(req);
    }
    if (m === "POST" && path === "/media-upload") {
      const form = await req.formData().catch(() => null);
      const key = String(form?.get("key") ?? "");
      const asset = [...state.assets.values()].find((a) => a.key === key);
      if (!asset || !(form?.get("file") instanceof Blob))
        return new Response("<Error><Code>AccessDenied</Code></Error>", {
          status: 403,
          headers: { "content-type": "application/xml" },
        });
      asset.uploaded = true;
      return new Response(
        `<?xml version="1.0" encoding="UTF-8"?><PostResponse><Location>${base}/media-upload/${encodeURIComponent(key)}</Location><Key>${key}</Key></PostResponse>`,
        { status: 201, headers: { "content-type": "application/xml" } },
      );
    }
    authed(req, path);
    if (m === "GET" && path === "/api/v1/me")
      return Response.json({ ...user, subreddit: { display_name: `u_${user.name}`, subscribers: followers } });
    if (m === "POST" && path === "/api/media/asset.json") {
      const f = new URLSearchParams(await req.text());
      const type = f.get("mimetype") ?? "";
      if (!type.startsWith("image/") || !f.get("filepath"))
        throw new HttpError(400, "filepath and an image mimetype are required");
      const id = randomBytes(8).toString("hex");
      const key = `rte_images/${id}/${f.get("filepath")}`;
      state.assets.set(id, { key, uploaded: false, type });
      // Protocol-relative, as Reddit's: the client supplies the scheme.
      return Response.json({
        args: {
          action: base.replace(/^https?:/, "") + "/media-upload",
          fields: [
            { name: "key", value: key },
            { name: "Content-Type", value: type },
            { name: "x-amz-signature", value: randomBytes(8).toString("hex") },
          ],
        },
        asset: { asset_id: id, websocket_url: `wss://ws.redditmedia.com/rte_images/${id}` },
      });
    }
    if (m === "POST" && path === "/api/submit") {
      const f = new URLSearchParams(await req.text());
      const kind = f.get("kind") as Post["kind"];
      const sr = f.get("sr") ?? "";
      const title = f.get("title") ?? "";
      if (!["self", "link", "image"].includes(kind))
        return errors(["INVALID_OPTION", "that option is not valid", "kind"]);
      if (!title) return errors(["NO_TEXT", "we need something here", "title"]);
      if (title.length > 300) return errors(["TOO_LONG", "this is too long (max: 300)", "title"]);
      const problem = subredditProblem(sr, kind);
      if (problem) return errors(problem);
      if (kind === "link" && !/^https?:\/\//.test(f.get("url") ?? ""))
        return errors(["BAD_URL", "you should check that url", "url"]);
      if (kind === "image") {
        const location = f.get("url") ?? "";
        const asset = [...state.assets.values()].find(
          (a) => location.endsWith(encodeURIComponent(a.key)) || location.endsWith(a.key),
        );
        if (!asset?.uploaded) return errors(["BAD_URL", "the image was not uploaded", "url"]);
        addPost({ sr, title, kind, text: "", url: location, images: 1, ...marksOf((k) => f.get(k)) });
        return Response.json({
          json: {
            errors: [],
            data: {
              user_submitted_page: `https://www.reddit.com/user/${user.name}/submitted/`,
              websocket_url: "wss://ws.redditmedia.com/x",
            },
          },
        });
      }
      const p = addPost({
        sr,
        title,
        kind,
        text: kind === "self" ? (f.get("text") ?? "") : "",
        url: kind === "link" ? f.get("url") : null,
        images: 0,
        ...marksOf((k) => f.get(k)),
      });
      return Response.json({
        json: {
          errors: [],
          data: { url: `https://www.reddit.com${permalink(p)}`, drafts_count: 0, id: p.name.slice(3), name: p.name },
        },
      });
    }
    if (m === "POST" && path === "/api/submit_gallery_post.json") {
      const b = (await req.json().catch(() => null)) as
        ({ sr?: string; title?: string; items?: { media_id?: string }[] } & Record<string, unknown>) | null;
      const sr = b?.sr ?? "";
      const title = b?.title ?? "";
      if (!title) return errors(["NO_TEXT", "we need something here", "title"]);
      const problem = subredditProblem(sr, "gallery");
      if (problem) return errors(problem);
      const items = b?.items ?? [];
      if (items.length < 2 || items.length > 20 || items.some((i) => !state.assets.get(i.media_id ?? "")?.uploaded))
        return errors(["GALLERY_INVALID", "a gallery needs 2 to 20 uploaded images", "items"]);
      const p = addPost({
        sr,
        title,
        kind: "gallery",
        text: "",
        url: null,
        images: items.length,
        ...marksOf((k) => b?.[k]),
      });
      return Response.json({
        json: { errors: [], data: { url: `https://www.reddit.com/gallery/${p.name.slice(3)}`, id: p.name } },
      });
    }
    if (m === "POST" && path === "/api/comment") {
      const f = new URLSearchParams(await req.text());
      const parent = f.get("thing_id") ?? "";
      const post = state.posts.find((p) => p.name === parent);
      const under = state.comments.find((c) => c.name === parent);
      if (!post && !under) return errors(["INVALID_THING", "that thing does not exist", "thing_id"]);
      if ([...(f.get("text") ?? "")].length > COMMENT_MAX)
        return errors(["TOO_LONG", `this is too long (max: ${COMMENT_MAX})`, "text"]);
      const root =
        post ??
        state.posts.find(
          (p) =>
            p.name ===
            (function find(c: Comment): string {
              const up = state.comments.find((x) => x.name === c.parent);
              return up ? find(up) : c.parent;
            })(under!),
        );
      const c: Comment = { name: `t1_${b36()}`, parent, text: f.get("text") ?? "" };
      state.comments.push(c);
      if (root) root.comments += 1;
      state.emulated.push({ id: c.name, text: c.text, media: [], replyTo: parent, createdAt: new Date() });
      return Response.json({
        json: {
          errors: [],
          data: {
            things: [
              {
                kind: "t1",
                data: {
                  name: c.name,
                  id: c.name.slice(3),
                  body: c.text,
                  permalink: `${root ? permalink(root) : "/"}${c.name.slice(3)}/`,
                },
              },
            ],
          },
        },
      });
    }
    const submitted = /^\/user\/([^/]+)\/submitted$/.exec(path);
    if (m === "GET" && submitted) {
      const list =
        submitted[1] === user.name
          ? [...state.posts].reverse().slice(0, Number(url.searchParams.get("limit") ?? 25))
          : [];
      return Response.json({ kind: "Listing", data: { children: list.map(listingItem), after: null } });
    }
    if (m === "GET" && path === "/api/info") {
      const ids = (url.searchParams.get("id") ?? "").split(",");
      return Response.json({
        kind: "Listing",
        data: { children: state.posts.filter((p) => ids.includes(p.name)).map(listingItem) },
      });
    }
    throw new HttpError(404, "Not Found");
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return Response.json(
        { message: "Too Many Requests", error: 429 },
        {
          status: 429,
          headers: {
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "100",
            "x-ratelimit-reset": String(f.retryAfterSeconds ?? 60),
          },
        },
      );
    if (f.kind === "server_error")
      return new Response("<html><body><h1>500 Internal Server Error</h1></body></html>", {
        status: 500,
        headers: { "content-type": "text/html" },
      });
    if (f.kind === "auth_expired") return Response.json({ message: "Unauthorized", error: 401 }, { status: 401 });
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "reddit",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/api/") && !path.startsWith("/api/v1/access_token"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: HttpError,
      errorResponse: (e) =>
        Response.json(
          { message: e.message, error: e.status },
          {
            status: e.status,
            headers:
              e.status === 403 ? { "www-authenticate": 'Bearer realm="reddit", error="insufficient_scope"' } : {},
          },
        ),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      followers = n;
    },
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
    engage(name, counts) {
      const p = state.posts.find((x) => x.name === name);
      if (!p) throw new Error(`no post ${name}`);
      addCounts(p, counts);
    },
  };
}

export default defineEmulator(() => createRedditEmulator());
