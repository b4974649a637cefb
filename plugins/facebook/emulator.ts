/**
 * An emulator of the Facebook Graph surface the plugin uses: OAuth (dialog, code exchange by GET with
 * id and secret, fb_exchange_token for a long-lived user token), /me/accounts with Page tokens, and for
 * a Page (its own token required): feed posts (message, link, attached_media of unpublished photos),
 * photos (multipart source; published or not), videos (the Resumable Upload API's session, bytes and
 * handle, or a multipart source) processed over status reads, Reels and Stories (emulator-placements.ts),
 * permalinks, the Page's posts, comments
 * made as the Page under a post (pages_manage_engagement) and their listing, reaction/comment/share
 * summaries, media-view insights and video insights. Errors are Graph errors.
 *
 * Sandbox rule: client "sandbox"/"sandbox"; the user manages one Page, "Sandbox Page" (tests can add
 * more with addPage).
 */
import { breach, inspectMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import { randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator } from "../../src/platform/sdk.ts";
import {
  addCounts,
  AuthorizationCodes,
  FailurePlan,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { GraphError, graphFailingHandler } from "../../src/platform/graph-emulator.ts";
import { placementRoute, type PlacementDeps, type ReelSession } from "./emulator-placements.ts";

interface Page {
  id: string;
  name: string;
  token: string;
}
interface Post {
  id: string;
  page: string;
  message: string;
  link: string | null;
  photos: string[];
  video: string | null;
  createdAt: Date;
  reactions: number;
  comments: number;
  shares: number;
  views: number;
  /** feed, reels or story (absent: feed, for state saved before). */
  placement?: "feed" | "reels" | "story";
}
interface Photo {
  id: string;
  page: string;
  published: boolean;
  type: string;
  /** alt_text_custom as sent. */
  alt?: string;
  /** Published as a Story (a photo is used once). */
  storied?: boolean;
}
/** A comment under a Page post, made as the Page with its token. */
interface Comment {
  id: string;
  post: string;
  page: string;
  message: string;
  createdAt: Date;
}
interface Video {
  id: string;
  page: string;
  status: "processing" | "ready" | "error";
  reads: number;
}

/** A session of the Resumable Upload API (POST /{app-id}/uploads, then POST /upload:{id} with the bytes). */
interface Upload {
  id: string;
  length: number;
  type: string;
  received: number;
  /** The first bytes, for judging the file as Facebook does (a plain byte array once restored from saved state). */
  head: Uint8Array;
  handle: string | null;
}

export interface FacebookEmulator extends Emulator {
  addPage(name: string): string;
  engage(id: string, counts: Partial<Pick<Post, "reactions" | "comments" | "shares" | "views">>): void;
  /** How each Page video arrived: by a Resumable Upload API handle or as a `source` file in the request. */
  videoUploads(): { via: "resumable" | "source"; bytes: number }[];
  /** The message of processing_phase.errors for a file Facebook cannot process. */
  readonly processingError: string;
}

// The Resumable Upload API (developers.facebook.com/docs/graph-api/guides/upload, checked 2026-11-26):
// POST /{app-id}/uploads with file_name, file_length and file_type (application/pdf, image/jpeg,
// image/jpg, image/png or video/mp4) answers {id: "upload:<session>"}; POST /upload:<session> with
// "Authorization: OAuth <token>" and a file_offset header carries the bytes and answers {h: <handle>};
// GET /upload:<session> answers {id, file_offset} to resume. The Video API publishing guide
// (developers.facebook.com/docs/video-api/guides/publishing, same date) then posts the handle as
// fbuploader_video_file_chunk to /{page-id}/videos.
// Permissions (developers.facebook.com/docs/pages-api/posts and docs/video-api/guides/publishing,
// checked 2026-11-26): publishing to a Page needs pages_manage_posts and pages_read_engagement (Meta's
// own "(#200) If posting to a page, requires both"); reading the Page and its posts
// pages_read_engagement (and pages_read_user_content for the feed), insights read_insights, listing the
// Pages pages_show_list.
const POSTING = ["pages_manage_posts", "pages_read_engagement"];
// Comments (developers.facebook.com/documentation/pages-api/comments-mentions, read 2026-11-26): a Page
// token whose user granted pages_manage_engagement comments as the Page with `POST /{page-post-id}/comments`
// and a `message` (or an attachment), answered {id}. The guide and the /{object-id}/comments reference
// document no length limit: the emulator refuses past 8,000 characters, the limit of Facebook's comment
// box (Crier's declared limit, so Crier never sends a longer one). A missing permission is Meta's (#200)
// permissions error, answered 403 here.
const COMMENTING = "pages_manage_engagement";
const COMMENT_MAX = 8000;
const UPLOAD_TYPES = ["application/pdf", "image/jpeg", "image/jpg", "image/png", "video/mp4"];
const PROCESSING_ERROR = "There was a problem processing your video file. Please try again with another file.";

/**
 * POST /{page-id}/photos (developers.facebook.com/docs/graph-api/reference/page/photos, checked
 * 2026-11-26): JPEG, BMP, PNG, GIF or TIFF, at most 4 MB. The type is checked by sniffImage below.
 */
const PHOTO_RULE: MediaRule = { maxBytes: 4 * 1024 * 1024 };

function sniffImage(b: Buffer): string | null {
  if (b[0] === 0xff && b[1] === 0xd8) return "image/jpeg";
  if (b.subarray(1, 4).toString("latin1") === "PNG") return "image/png";
  if (b.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (b.subarray(0, 2).toString("latin1") === "BM") return "image/bmp";
  if (["II*\0", "MM\0*"].includes(b.subarray(0, 4).toString("latin1"))) return "image/tiff";
  return null;
}

/**
 * The `thumb` of a Page video: the image file shown while the video is not playing (Page videos reference,
 * developers.facebook.com/docs/graph-api/reference/page/videos), at most 10 MB ("Maximum thumbnail file size
 * 10MB", developers.facebook.com/docs/graph-api/reference/video/thumbnails; both checked 2026-11-26).
 * A value that is not an image file is an invalid parameter.
 */
async function thumbOf(value: FormDataEntryValue | undefined): Promise<{ content_type: string; size: number } | null> {
  if (value === undefined) return null;
  if (!(value instanceof Blob)) throw new GraphError(400, 100, "(#100) Param thumb must be a file upload");
  if (value.size > 10 * 1024 * 1024)
    throw new GraphError(400, 100, "(#100) The thumbnail file is larger than the maximum of 10MB");
  const type = sniffImage(Buffer.from(await value.slice(0, 12).arrayBuffer()));
  if (!type) throw new GraphError(400, 100, "(#100) Param thumb is not a valid image file");
  return { content_type: type, size: value.size };
}

const num = () => String(100_000_000_000_000n + BigInt(randomBytes(5).readUIntBE(0, 5)));

export function createFacebookEmulator(): FacebookEmulator {
  const failures = new FailurePlan();
  const state = resettable(() => ({
    /** User tokens and the permissions granted with them (null: everything, for state saved before). */
    userTokens: new Map<string, string[] | null>(),
    codeScopes: new Map<string, string[]>(),
    pageScopes: new Map<string, string[]>(),
    pages: [] as Page[],
    posts: [] as Post[],
    photos: new Map<string, Photo>(),
    videos: new Map<string, Video>(),
    uploads: new Map<string, Upload>(),
    arrivals: [] as { via: "resumable" | "source"; bytes: number }[],
    comments: [] as Comment[],
    emulated: [] as EmulatedPost[],
    /** Reels and video Stories being uploaded (emulator-placements.ts). */
    sessions: new Map<string, ReelSession>(),
  }));
  const clients = new Map([["sandbox", "sandbox"]]);
  const codes = new AuthorizationCodes();

  const addPage = (name: string) => {
    const p: Page = { id: num(), name, token: `EAAPage${randomBytes(16).toString("hex")}` };
    state.pages.push(p);
    return p.id;
  };
  addPage("Sandbox Page");

  const tokenOf = (req: Request, url: URL) =>
    /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? url.searchParams.get("access_token") ?? "";

  /**
   * The Page the call is for, with its own token; each of `permissions` must have been granted by the
   * user whose /me/accounts gave the token, else Meta's (#200) permissions error.
   */
  function pageAuth(req: Request, url: URL, pageId: string, ...permissions: string[]): Page {
    const page = state.pages.find((p) => p.id === pageId);
    if (!page)
      throw new GraphError(400, 100, `Unsupported post request. Object with ID '${pageId}' does not exist`, 33);
    if (tokenOf(req, url) !== page.token)
      throw new GraphError(400, 190, "Error validating access token: the token is not this Page's token.", 460);
    const granted = state.pageScopes.get(page.token);
    const missing = permissions.filter((x) => granted && !granted.includes(x));
    if (missing.length)
      throw new GraphError(400, 200, `(#200) This call requires the ${missing.join(" and ")} permission`);
    return page;
  }

  function ownerAuth(req: Request, url: URL, ownerPage: string, ...permissions: string[]) {
    return pageAuth(req, url, ownerPage, ...permissions);
  }

  /** A token Facebook knows: a user's, or one of the Pages'. */
  function knownToken(token: string): boolean {
    return state.userTokens.has(token) || state.pages.some((p) => p.token === token);
  }

  function startUpload(req: Request, url: URL, appId: string): Response {
    if (!clients.has(appId))
      throw new GraphError(400, 100, `Unsupported post request. Object with ID '${appId}' does not exist`, 33);
    if (!knownToken(tokenOf(req, url))) throw new GraphError(400, 190, "Invalid OAuth access token.");
    const q = url.searchParams;
    const length = Number(q.get("file_length"));
    const type = q.get("file_type") ?? "";
    if (!q.get("file_name")) throw new GraphError(400, 100, "(#100) The parameter file_name is required");
    if (!Number.isInteger(length) || length <= 0)
      throw new GraphError(400, 100, "(#100) Param file_length must be a positive integer");
    if (!UPLOAD_TYPES.includes(type))
      throw new GraphError(400, 100, `(#100) Param file_type must be one of {${UPLOAD_TYPES.join(", ")}}`);
    const up: Upload = { id: num(), length, type, received: 0, head: Buffer.alloc(0), handle: null };
    state.uploads.set(up.id, up);
    return Response.json({ id: `upload:${up.id}` });
  }

  /** The upload step: the OAuth scheme (not Bearer) and the offset the bytes start at, as the guide shows them. */
  async function transfer(req: Request, sessionId: string): Promise<Response> {
    const up = state.uploads.get(sessionId);
    if (!up) throw new GraphError(400, 100, "Invalid upload session", 2069021);
    const token = /^OAuth (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    if (!knownToken(token)) throw new GraphError(400, 190, "Invalid OAuth access token.");
    const offset = Number(req.headers.get("file_offset"));
    if (!Number.isInteger(offset) || offset !== up.received)
      throw new GraphError(400, 100, `The file_offset header must be ${up.received}`, 2069022);
    for await (const chunk of (req.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
      up.received += chunk.byteLength;
      if (up.head.length < 16) up.head = Buffer.concat([up.head, Buffer.from(chunk)]).subarray(0, 16);
      if (up.received > up.length) throw new GraphError(400, 100, "More bytes than file_length were sent", 2069023);
    }
    if (up.received === up.length) up.handle ??= `4:${Buffer.from(`${up.id}:${up.type}`).toString("base64")}`;
    return Response.json(up.handle ? { h: up.handle } : { id: `upload:${up.id}`, file_offset: up.received });
  }

  function uploadStatus(sessionId: string): Response {
    const up = state.uploads.get(sessionId);
    if (!up) throw new GraphError(400, 100, "Invalid upload session", 2069021);
    return Response.json({ id: `upload:${up.id}`, file_offset: up.received });
  }

  async function body(req: Request): Promise<Map<string, FormDataEntryValue>> {
    const type = req.headers.get("content-type") ?? "";
    if (type.startsWith("multipart/form-data") || type.startsWith("application/x-www-form-urlencoded")) {
      const f = await req.formData();
      return new Map([...f.entries()]);
    }
    const j = (await req.json().catch(() => ({}))) as Record<string, string>;
    return new Map(Object.entries(j).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  }

  function addPost(
    p: Omit<Post, "id" | "createdAt" | "reactions" | "comments" | "shares" | "views" | "placement">,
    id?: string,
    placement: NonNullable<Post["placement"]> = "feed",
  ): Post {
    const post: Post = {
      ...p,
      id: id ?? `${p.page}_${num()}`,
      createdAt: new Date(),
      reactions: 0,
      comments: 0,
      shares: 0,
      views: 0,
      placement,
    };
    state.posts.push(post);
    state.emulated.push({
      id: post.id,
      text: post.message,
      media: [
        ...post.photos.map((id) => {
          const alt = state.photos.get(id)?.alt;
          return { type: "image", ...(alt !== undefined && { alt }) };
        }),
        ...(post.video ? [{ type: "video" }] : []),
      ],
      createdAt: post.createdAt,
      options: { placement },
    });
    return post;
  }

  const placements: PlacementDeps = {
    get sessions() {
      return state.sessions;
    },
    pageAuth: (req, url, pageId) => pageAuth(req, url, pageId, ...POSTING),
    pageOfToken: (token) => state.pages.find((x) => x.token === token),
    form: body,
    newId: num,
    addReel(page, videoId, description, error) {
      state.videos.set(videoId, { id: videoId, page, status: error ? "error" : "processing", reads: 0 });
      addPost({ page, message: description, link: null, photos: [], video: videoId }, videoId, "reels");
    },
    addStory(page, media) {
      const post = addPost(
        { page, message: "", link: null, photos: media.photo ? [media.photo] : [], video: media.video ?? null },
        undefined,
        "story",
      );
      return post.id;
    },
    takePhoto(page, photoId) {
      const ph = state.photos.get(photoId);
      if (!ph || ph.page !== page || ph.published || ph.storied)
        throw new GraphError(400, 100, `(#100) photo_id ${photoId} is not an unpublished, unused photo of this Page`);
      ph.storied = true;
    },
  };

  const commentJson = (c: Comment) => {
    const page = state.pages.find((x) => x.id === c.page)!;
    return {
      id: c.id,
      message: c.message,
      created_time: c.createdAt.toISOString(),
      from: { id: page.id, name: page.name },
      permalink_url: `https://www.facebook.com/${c.post}?comment_id=${c.id.split("_").pop()}`,
    };
  };

  /** The post (or video) a comment call names, else Graph's "does not exist" refusal. */
  function commentParent(id: string, method: "post" | "get"): Post {
    const post = state.posts.find((x) => x.id === id);
    if (!post)
      throw new GraphError(400, 100, `Unsupported ${method} request. Object with ID '${id}' does not exist`, 33);
    return post;
  }

  async function comment(req: Request, url: URL, parentId: string): Promise<Response> {
    const post = commentParent(parentId, "post");
    const page = pageAuth(req, url, post.page);
    const granted = state.pageScopes.get(page.token);
    if (granted && !granted.includes(COMMENTING))
      throw new GraphError(403, 200, `(#200) This call requires the ${COMMENTING} permission`);
    const f = await body(req);
    const message = String(f.get("message") ?? "");
    if (!message.trim() && !f.get("attachment_id") && !f.get("attachment_url"))
      throw new GraphError(400, 100, "(#100) A comment needs a message or an attachment");
    if ([...message].length > COMMENT_MAX)
      throw new GraphError(400, 100, `(#100) The comment is longer than ${COMMENT_MAX} characters`);
    const c: Comment = {
      id: `${post.id.split("_").pop()}_${num()}`,
      post: post.id,
      page: page.id,
      message,
      createdAt: new Date(),
    };
    state.comments.push(c);
    post.comments += 1;
    state.emulated.push({ id: c.id, text: message, media: [], replyTo: post.id, createdAt: c.createdAt });
    return Response.json({ id: c.id });
  }

  /** GET /{page-post-id}/comments, newest first with order=reverse_chronological, paged by `limit`. */
  function listComments(req: Request, url: URL, parentId: string): Response {
    const post = commentParent(parentId, "get");
    ownerAuth(req, url, post.page, "pages_read_engagement");
    const all = state.comments.filter((c) => c.post === post.id);
    if (url.searchParams.get("order") === "reverse_chronological") all.reverse();
    const limit = Number(url.searchParams.get("limit") ?? 25);
    const shown = all.slice(0, limit);
    return Response.json({
      data: shown.map(commentJson),
      ...(all.length > limit && { paging: { next: `${url.origin}${url.pathname}?after=${shown.at(-1)!.id}` } }),
    });
  }

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    const p = path.replace(/^\/v\d+\.\d+/, "");
    if (m === "GET" && (p === "/dialog/oauth" || path === "/oauth/authorize")) {
      const consent = codes.authorize(
        url,
        clients,
        () => new GraphError(400, 100, "client_id and redirect_uri are required"),
      );
      const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
      state.codeScopes.set(code, (url.searchParams.get("scope") ?? "").split(",").filter(Boolean));
      return consent;
    }
    if (m === "GET" && (p === "/oauth/access_token" || path === "/oauth/token")) {
      const q = url.searchParams;
      if (clients.get(q.get("client_id") ?? "") !== q.get("client_secret"))
        throw new GraphError(400, 1, "Error validating client secret.");
      if (q.get("grant_type") === "fb_exchange_token") {
        const shortToken = q.get("fb_exchange_token") ?? "";
        if (!state.userTokens.has(shortToken)) throw new GraphError(400, 190, "Invalid OAuth access token.");
        const long = `EAALong${randomBytes(16).toString("hex")}`;
        state.userTokens.set(long, state.userTokens.get(shortToken) ?? null);
        return Response.json({ access_token: long, token_type: "bearer", expires_in: 5184000 });
      }
      const code = q.get("code") ?? "";
      if (!codes.redeem(code, q.get("redirect_uri")))
        throw new GraphError(400, 100, "Invalid verification code format.", 36007);
      const short = `EAAShort${randomBytes(16).toString("hex")}`;
      state.userTokens.set(short, state.codeScopes.get(code) ?? null);
      return Response.json({ access_token: short, token_type: "bearer", expires_in: 5400 });
    }
    if (m === "GET" && p === "/me/accounts") {
      const user = tokenOf(req, url);
      if (!state.userTokens.has(user)) throw new GraphError(400, 190, "Invalid OAuth access token.");
      const granted = state.userTokens.get(user);
      if (Array.isArray(granted) && !granted.includes("pages_show_list"))
        throw new GraphError(400, 200, "(#200) This call requires the pages_show_list permission");
      // A Page token carries the permissions of the user it was given to.
      for (const x of state.pages) if (Array.isArray(granted)) state.pageScopes.set(x.token, granted);
      return Response.json({
        data: state.pages.map((x) => ({
          id: x.id,
          name: x.name,
          access_token: x.token,
          category: "Brand",
          tasks: ["CREATE_CONTENT", "MANAGE"],
          picture: { data: { url: `https://graph.facebook.com/${x.id}/picture` } },
        })),
      });
    }
    const uploads = /^\/([^/]+)\/uploads$/.exec(p);
    if (uploads && m === "POST") return startUpload(req, url, uploads[1]);
    const session = /^\/upload:(\d+)$/.exec(p);
    if (session && m === "POST") return transfer(req, session[1]);
    if (session && m === "GET") return uploadStatus(session[1]);
    const commentsEdge = /^\/([\d_]+)\/comments$/.exec(p);
    if (commentsEdge && m === "POST") return comment(req, url, commentsEdge[1]);
    if (commentsEdge && m === "GET") return listComments(req, url, commentsEdge[1]);
    const pageNode = /^\/(\d+)$/.exec(p);
    if (pageNode && m === "GET" && state.pages.some((x) => x.id === pageNode[1])) {
      const page = pageAuth(req, url, pageNode[1], "pages_read_engagement");
      const fields = (url.searchParams.get("fields") ?? "").split(",");
      return Response.json({
        id: page.id,
        name: page.name,
        ...(fields.includes("followers_count") && { followers_count: followers }),
        ...(fields.includes("fan_count") && { fan_count: followers }),
      });
    }
    const edge = /^\/(\d+)\/(feed|photos|videos|posts|insights)$/.exec(p);
    if (edge && m === "POST" && edge[2] === "feed") {
      const page = pageAuth(req, url, edge[1], ...POSTING);
      const f = await body(req);
      const message = String(f.get("message") ?? "");
      const link = f.get("link") ? String(f.get("link")) : null;
      const attached = [...f.entries()]
        .filter(([k]) => /^attached_media\[\d+\]$/.test(k))
        .map(([, val]) => JSON.parse(String(val)).media_fbid as string);
      if (!message && !link && attached.length === 0)
        throw new GraphError(400, 100, "The post is empty: give a message, a link or attached media.");
      for (const id of attached) {
        const ph = state.photos.get(id);
        if (!ph || ph.page !== page.id || ph.published)
          throw new GraphError(400, 100, `attached_media ${id} is not an unpublished photo of this Page.`);
      }
      const post = addPost({ page: page.id, message, link, photos: attached, video: null });
      return Response.json({ id: post.id });
    }
    if (edge && m === "POST" && edge[2] === "photos") {
      const page = pageAuth(req, url, edge[1], ...POSTING);
      const f = await body(req);
      const source = f.get("source");
      if (!(source instanceof Blob) && !f.get("url")) throw new GraphError(400, 324, "Requires upload file", 2069019);
      // Facebook judges the file by its bytes, whatever the part says.
      const type =
        source instanceof Blob ? sniffImage(Buffer.from(await source.slice(0, 8).arrayBuffer())) : "image/jpeg";
      if (!type) throw new GraphError(400, 100, "Invalid image format", 1366046);
      if (source instanceof Blob && breach(inspectMedia(new Uint8Array(await source.arrayBuffer())), PHOTO_RULE))
        throw new GraphError(
          400,
          100,
          "Your photos couldn't be uploaded. Photos should be less than 4 MB and saved as JPG, PNG, GIF, TIFF, HEIF or WebP files.",
          1366046,
        );
      const published = String(f.get("published") ?? "true") !== "false";
      // alt_text_custom: "User provided accessible alternative description for an image", a string
      // (developers.facebook.com/docs/graph-api/reference/photo/, 2026-11-26).
      const alt = f.get("alt_text_custom");
      if (alt instanceof Blob) throw new GraphError(400, 100, "(#100) Param alt_text_custom must be a string.");
      const ph: Photo = { id: num(), page: page.id, published, type, ...(typeof alt === "string" && { alt }) };
      state.photos.set(ph.id, ph);
      if (!published) return Response.json({ id: ph.id });
      const post = addPost({
        page: page.id,
        message: String(f.get("message") ?? ""),
        link: null,
        photos: [ph.id],
        video: null,
      });
      return Response.json({ id: ph.id, post_id: post.id });
    }
    if (edge && m === "POST" && edge[2] === "videos") {
      const page = pageAuth(req, url, edge[1], ...POSTING);
      const f = await body(req);
      const source = f.get("source");
      const handle = f.get("fbuploader_video_file_chunk");
      let head: Buffer;
      if (typeof handle === "string") {
        const up = [...state.uploads.values()].find((u) => u.handle === handle);
        if (!up) throw new GraphError(400, 100, "(#100) Invalid fbuploader_video_file_chunk handle");
        head = Buffer.from(up.head);
        state.arrivals.push({ via: "resumable", bytes: up.received });
      } else if (source instanceof Blob) {
        // The non-resumable upload: the whole file in the request.
        head = Buffer.from(await source.slice(0, 12).arrayBuffer());
        state.arrivals.push({ via: "source", bytes: source.size });
      } else throw new GraphError(400, 100, "source, file_url or fbuploader_video_file_chunk is required");
      const thumb = await thumbOf(f.get("thumb"));
      const vid: Video = {
        id: num(),
        page: page.id,
        status: head.subarray(4, 8).toString("latin1") === "ftyp" ? "processing" : "error",
        reads: 0,
      };
      state.videos.set(vid.id, vid);
      addPost(
        { page: page.id, message: String(f.get("description") ?? ""), link: null, photos: [], video: vid.id },
        vid.id,
      );
      if (thumb) state.emulated.at(-1)!.options = { ...state.emulated.at(-1)!.options, thumb };
      return Response.json({ id: vid.id });
    }
    if (edge && m === "GET" && edge[2] === "posts") {
      const page = pageAuth(req, url, edge[1], "pages_read_engagement", "pages_read_user_content");
      const since = Number(url.searchParams.get("since") ?? 0);
      const list = state.posts
        // A Story is not among the Page's posts (Stories are read on /{page-id}/stories).
        .filter((x) => x.page === page.id && x.placement !== "story" && x.createdAt.getTime() / 1000 >= since)
        .reverse()
        .slice(0, Number(url.searchParams.get("limit") ?? 25));
      return Response.json({
        data: list.map((x) => ({
          id: x.id,
          message: x.message,
          created_time: x.createdAt.toISOString(),
          permalink_url: `https://www.facebook.com/${x.id}`,
          ...(x.photos.length && {
            attachments: {
              data: [
                x.photos.length === 1
                  ? {
                      media_type: "photo",
                      media: { image: { src: `https://scontent.xx.fbcdn.net/${x.photos[0]}.jpg` } },
                    }
                  : {
                      media_type: "album",
                      subattachments: {
                        data: x.photos.map((id) => ({
                          media_type: "photo",
                          media: { image: { src: `https://scontent.xx.fbcdn.net/${id}.jpg` } },
                        })),
                      },
                    },
              ],
            },
          }),
        })),
      });
    }
    const videoInsights = /^\/(\d+)\/video_insights$/.exec(p);
    if (videoInsights && m === "GET") {
      const vid = state.videos.get(videoInsights[1]);
      if (!vid)
        throw new GraphError(
          400,
          100,
          `Unsupported get request. Object with ID '${videoInsights[1]}' does not exist`,
          33,
        );
      ownerAuth(req, url, vid.page, "read_insights");
      const post = state.posts.find((x) => x.id === vid.id)!;
      // Video Insights (developers.facebook.com/docs/graph-api/reference/video/video_insights, checked
      // 2026-11-26): total_video_views is lifetime views of 3 seconds or more.
      const metrics = (url.searchParams.get("metric") ?? "total_video_views").split(",");
      const unknown = metrics.find((n) => !["total_video_views", "total_video_views_unique"].includes(n));
      if (unknown) throw new GraphError(400, 100, "(#100) The value must be a valid insights metric");
      return Response.json({
        data: metrics.map((name) => ({
          name,
          period: "lifetime",
          values: [{ value: post.views }],
          id: `${vid.id}/video_insights/${name}/lifetime`,
        })),
      });
    }
    const insights = /^\/([\d_]+)\/insights$/.exec(p);
    if (insights && m === "GET") {
      if (state.videos.has(insights[1]))
        throw new GraphError(400, 100, "(#100) Tried accessing nonexisting field (insights) on node type (Video)");
      const post = state.posts.find((x) => x.id === insights[1]);
      if (!post) throw new GraphError(400, 100, "Object does not exist");
      ownerAuth(req, url, post.page, "read_insights");
      const metric = url.searchParams.get("metric") ?? "";
      if (/post_impressions/.test(metric))
        throw new GraphError(400, 100, "(#100) The value must be a valid insights metric");
      return Response.json({
        data: metric.split(",").map((name) => ({ name, period: "lifetime", values: [{ value: post.views }] })),
      });
    }
    const node = /^\/([\d_]+)$/.exec(p);
    if (node && m === "GET") {
      const c = state.comments.find((x) => x.id === node[1]);
      if (c) {
        ownerAuth(req, url, c.page, "pages_read_engagement");
        return Response.json(commentJson(c));
      }
      const vid = state.videos.get(node[1]);
      const fields = url.searchParams.get("fields") ?? "";
      if (vid && fields.includes("status")) {
        ownerAuth(req, url, vid.page, "pages_read_engagement");
        if (vid.status === "processing" && ++vid.reads >= 2) vid.status = "ready";
        // The Video node's status (developers.facebook.com/docs/graph-api/reference/video, checked
        // 2026-11-26): video_status, and per phase a status with its errors [{code, message}].
        return Response.json({
          id: vid.id,
          status: {
            video_status: vid.status,
            uploading_phase: { status: "complete" },
            processing_phase: {
              status: vid.status === "error" ? "error" : vid.status === "ready" ? "complete" : "in_progress",
              ...(vid.status === "error" && { errors: [{ code: 1363008, message: PROCESSING_ERROR }] }),
            },
          },
        });
      }
      // The Video node has no shares field; asking for one fails the whole request.
      if (vid && fields.split(",").some((f) => f.split(".")[0] === "shares"))
        throw new GraphError(400, 100, "(#100) Tried accessing nonexisting field (shares) on node type (Video)");
      const post = state.posts.find((x) => x.id === node[1]);
      if (!post)
        throw new GraphError(400, 100, `Unsupported get request. Object with ID '${node[1]}' does not exist`, 33);
      ownerAuth(req, url, post.page, "pages_read_engagement");
      return Response.json({
        id: post.id,
        permalink_url: `https://www.facebook.com/${post.id}`,
        reactions: { data: [], summary: { total_count: post.reactions } },
        comments: { data: [], summary: { total_count: post.comments } },
        ...(post.shares && { shares: { count: post.shares } }),
      });
    }
    const placed = await placementRoute(placements, req, path, url);
    if (placed) return placed;
    throw new GraphError(400, 100, `Unknown path components: ${path}`, 2500);
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "facebook",
    state: emulatorState({ state, codes }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...graphFailingHandler({
      failures,
      canFail: (path) => /^\/v\d+\.\d+\/(\d|upload:)/.test(path),
      route: (req, path) => route(req, path, new URL(req.url)),
      apiType: "GraphMethodException",
      throttled: new GraphError(400, 32, "Page request limit reached"),
      expired: new GraphError(
        400,
        190,
        "Error validating access token: The session has been invalidated because the user changed their password.",
        460,
      ),
      forbidden: new GraphError(403, 200, "(#200) The user hasn't authorized the application to perform this action"),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      followers = n;
    },
    reset() {
      failures.clear();
      codes.clear();
      state.reset();
      addPage("Sandbox Page");
    },
    addPage,
    videoUploads: () => [...state.arrivals],
    processingError: PROCESSING_ERROR,
    engage(id, counts) {
      const post = state.posts.find((x) => x.id === id);
      if (!post) throw new Error(`no post ${id}`);
      addCounts(post, counts);
    },
  };
}

export default defineEmulator(() => createFacebookEmulator());
