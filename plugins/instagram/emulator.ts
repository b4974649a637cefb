/**
 * An emulator of the Instagram Login and Graph content-publishing surface the plugin uses: OAuth (code
 * exchange with id and secret in the body, long-lived exchange, refresh), media containers (JPEG image,
 * REELS, a Trial Reel with trial_params, STORIES, carousel of 2–10 with VIDEO children; collaborators,
 * user_tags, location_id, share_to_feed and thumb_offset where Instagram takes them) whose media it really
 * downloads and type-checks, status codes moving IN_PROGRESS → FINISHED or ERROR over status checks,
 * media_publish, permalinks, the user's media and insights, and the account's comments under its media
 * (instagram_business_manage_comments). Errors are Graph errors.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the account sandbox.insta.
 * Tokens age on the emulator's clock (createInstagramEmulator({ now }), advanceClock): a long-lived token lasts 60
 * days, and refresh_access_token refuses one younger than 24 hours or already expired, as Meta does.
 * Fidelity note: an injected auth_expired failure answers 190 once without expiring the token (a session
 * invalidated and restored); a token that really expired is never refreshed.
 */
import { defineEmulator, type EmulatedPost, type Emulator, type EmulatorOptions } from "../../src/platform/sdk.ts";
import { addCounts, FailurePlan, resettable, emulatorState } from "../../src/platform/emulator-kit.ts";
import { downloadedFile } from "../../src/platform/emulator-kit.ts";
import { breach, pullMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import {
  GraphError,
  graphFailingHandler,
  graphForm,
  graphId,
  LongLivedTokens,
} from "../../src/platform/graph-emulator.ts";

const CAPTION_MAX = 2200;

// Image specifications of POST /{ig-user-id}/media (developers.facebook.com/docs/instagram-platform/
// instagram-graph-api/reference/ig-user/media, checked 2026-11-26): JPEG only, 8 MB at most, aspect ratio
// within 4:5 and 1.91:1 (width 320–1440 is scaled, not refused). The refusals' codes and subcodes are the
// error-codes page's (…/instagram-graph-api/reference/error-codes, checked 2026-11-26): 36000/2207004 too
// large, 36001/2207005 not JPEG, 36003/2207009 aspect ratio.
const IMAGE_RULE: MediaRule = { types: ["image/jpeg"], maxBytes: 8 * 1024 * 1024, minAspect: 4 / 5, maxAspect: 1.91 };
// Reels specifications (same reference page, checked 2026-11-26): MOV or MP4, HEVC or H.264, 23–60 fps,
// at most 1920 columns, aspect ratio 0.01:1 to 10:1, 3 seconds to 15 minutes, 300 MB at most. A video out
// of spec ends its container in ERROR with 2207026 (unsupported video format, error-codes page).
const REELS_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime"],
  codecs: ["avc1", "avc3", "hvc1", "hev1"],
  minFrameRate: 23,
  maxFrameRate: 60,
  maxWidth: 1920,
  minAspect: 0.01,
  maxAspect: 10,
  minDuration: 3,
  maxDuration: 15 * 60,
  maxBytes: 300 * 1024 * 1024,
};
// Stories (IG User Media reference, media_type STORIES, checked 2026-11-26): one image (JPEG, 8 MB, any
// shape: Instagram frames a Story at 9:16) or one video of at most 60 seconds, 100 MB.
const STORY_IMAGE_RULE: MediaRule = { types: ["image/jpeg"], maxBytes: 8 * 1024 * 1024 };
const STORY_VIDEO_RULE: MediaRule = { ...REELS_RULE, maxDuration: 60, maxBytes: 100 * 1024 * 1024 };
// Container parameters by media type (same reference, checked 2026-11-26): share_to_feed, thumb_offset,
// cover_url and trial_params are for REELS; collaborators (up to 3 usernames) for images, REELS and
// carousels, never STORIES (Collaborators reference: "Stories is not supported"); location_id (a Page id)
// for images, REELS and carousels; user_tags on images ({username, x, y} with x and y in 0.0–1.0), REELS
// (usernames) and STORIES (x and y optional, since July 9, 2025).
const REELS_ONLY = ["share_to_feed", "thumb_offset"];
const COLLABORATORS_MAX = 3;
const LONG_TTL_S = 60 * 86400;
// Comments (IG Media comments reference, developers.facebook.com/documentation/instagram-platform/
// instagram-graph-api/reference/ig-media/comments, read 2026-11-26): `POST /{ig-media-id}/comments` with a
// `message` answers {id}; GET lists the media's comments (id, text, timestamp, from, username). Under
// Instagram Login both need instagram_business_basic and instagram_business_manage_comments. The reference
// names no length limit: the emulator refuses past 2,200 characters, the caption limit Crier declares for
// comments. A missing permission is Meta's (#10) error, answered 403 here.
const COMMENTING = "instagram_business_manage_comments";
const COMMENT_MAX = 2200;

interface Container {
  id: string;
  type: "IMAGE" | "REELS" | "VIDEO" | "CAROUSEL" | "STORIES";
  caption: string;
  url: string | null;
  children: string[];
  item: boolean;
  outcome: "FINISHED" | "ERROR";
  error: string | null;
  checks: number;
  published: boolean;
  /** trial_params of a REELS container: a Trial Reel. */
  trial: { graduation_strategy: string } | null;
  /** alt_text as sent (image containers only). */
  alt?: string;
  /** The cover_url image of a REELS container, as Instagram downloaded it. */
  cover: { content_type: string; size: number } | null;
  /** share_to_feed, thumb_offset, collaborators, user_tags and location_id as sent. */
  params?: Record<string, unknown>;
  /** A STORIES container's media: image or video. */
  story?: "image" | "video";
}

/** A comment the account made under one of its media. */
interface IgComment {
  id: string;
  media: string;
  text: string;
  createdAt: Date;
}

interface Media {
  id: string;
  container: Container;
  createdAt: Date;
  views: number;
  likes: number;
  comments: number;
  shares: number;
  saved: number;
}

export interface InstagramEmulator extends Emulator {
  engage(id: string, counts: Partial<Pick<Media, "views" | "likes" | "comments" | "shares" | "saved">>): void;
}

const newId = graphId(18_000_000_000_000_000n);

function jsonArray(raw: string, name: string): unknown[] {
  try {
    const v = JSON.parse(raw);
    if (Array.isArray(v)) return v;
  } catch {
    // refused below
  }
  throw new GraphError(400, 100, `Param ${name} must be a JSON array`);
}
const newCommentId = graphId(17_800_000_000_000_000n);

export function createInstagramEmulator(opts: EmulatorOptions & { now?: () => number } = {}): InstagramEmulator {
  const failures = new FailurePlan();
  const user = { user_id: "17841400000000001", id: "17841400000000001", username: "sandbox.insta" };
  const auth = new LongLivedTokens({
    prefix: "IG",
    exchangeGrant: "ig_exchange_token",
    refreshGrant: "ig_refresh_token",
    now: opts.now,
    expiredStatus: 400,
    codeAnswer: {
      user_id: user.user_id,
      permissions: ["instagram_business_basic", "instagram_business_content_publish"],
    },
  });
  const state = resettable(() => ({
    containers: new Map<string, Container>(),
    media: [] as Media[],
    comments: [] as IgComment[],
    emulated: [] as EmulatedPost[],
  }));

  /**
   * Instagram downloads the media itself and reads it. An image out of spec is refused when the container
   * is created; a video is refused later, on the container's status (ERROR with the subcode).
   */
  async function inspect(url: string, video: boolean, story = false): Promise<string | null> {
    const seen = await pullMedia(url, opts.pullMedia);
    if (seen === null) return "ERROR: media could not be fetched from the URL (2207052)";
    if (!video) {
      const b = breach(seen, story ? STORY_IMAGE_RULE : IMAGE_RULE);
      if (b?.rule === "maxBytes")
        throw new GraphError(400, 36000, "The image is too large to download. It should be less than 8 MiB.", 2207004);
      if (b?.rule === "types")
        throw new GraphError(400, 36001, "The image format is not supported. Supported formats are: JPEG", 2207005);
      if (b)
        throw new GraphError(
          400,
          36003,
          `The submitted image with aspect ratio (${seen.width}/${seen.height}) cannot be published. Please submit an image with a valid aspect ratio.`,
          2207009,
        );
      return null;
    }
    const b = breach(seen, story ? STORY_VIDEO_RULE : REELS_RULE);
    return b
      ? `ERROR: the video does not meet the ${story ? "Stories" : "Reels"} specifications: ${b.message} (2207026)`
      : null;
  }

  /**
   * A Reel's cover_url: "The path to an image to use as the cover image for the Reels tab", downloaded
   * by Instagram like the video; the IG User Media reference's specifications for a Reels cover photo
   * (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media,
   * checked 2026-11-26): format JPEG, file size 8 MB maximum. A cover that breaks them fails the container.
   */
  async function inspectCover(url: string): Promise<string | { content_type: string; size: number }> {
    if (!/^https?:\/\//.test(url)) return "ERROR: the cover image URL is not valid (2207052)";
    const file = await downloadedFile(url, opts.pullMedia);
    if (file === null) return "ERROR: the cover image could not be fetched from the URL (2207052)";
    const jpeg = file.head[0] === 0xff && file.head[1] === 0xd8 && file.head[2] === 0xff;
    if (!jpeg) return "ERROR: the cover image must be a JPEG (2207026)";
    if (file.size > 8 * 1024 * 1024) return "ERROR: the cover image is larger than 8 MB (2207026)";
    return { content_type: "image/jpeg", size: file.size };
  }

  /** trial_params is JSON with a graduation_strategy, and only REELS containers take it. */
  function trialOf(raw: string | null, type: Container["type"]): Container["trial"] {
    if (raw === null) return null;
    if (type !== "REELS") throw new GraphError(400, 100, "Param trial_params is only supported for REELS media");
    let parsed: { graduation_strategy?: unknown } | null = null;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // handled below
    }
    const g = parsed?.graduation_strategy;
    if (g !== "MANUAL" && g !== "SS_PERFORMANCE")
      throw new GraphError(400, 100, "Param trial_params[graduation_strategy] must be one of {MANUAL, SS_PERFORMANCE}");
    return { graduation_strategy: g };
  }

  /** The container parameters that depend on its media type, refused where Instagram refuses them. */
  function paramsOf(
    f: URLSearchParams | Map<string, string>,
    type: Container["type"],
    item: boolean,
  ): Record<string, unknown> {
    const get = (k: string) => f.get(k) ?? null;
    const out: Record<string, unknown> = {};
    for (const k of REELS_ONLY) {
      const v = get(k);
      if (v === null) continue;
      if (type !== "REELS") throw new GraphError(400, 100, `Param ${k} is only supported for REELS media`);
      if (k === "share_to_feed" && v !== "true" && v !== "false")
        throw new GraphError(400, 100, "Param share_to_feed must be a boolean");
      if (k === "thumb_offset" && !/^\d+$/.test(v))
        throw new GraphError(400, 100, "Param thumb_offset must be an integer");
      out[k] = k === "share_to_feed" ? v === "true" : Number(v);
    }
    const collaborators = get("collaborators");
    if (collaborators !== null) {
      if (type === "STORIES" || item)
        throw new GraphError(400, 100, "Param collaborators is not supported for this media type");
      const list = jsonArray(collaborators, "collaborators");
      if (list.length > COLLABORATORS_MAX || list.some((u) => typeof u !== "string"))
        throw new GraphError(400, 100, `Param collaborators must be a list of at most ${COLLABORATORS_MAX} usernames`);
      out.collaborators = list;
    }
    const location = get("location_id");
    if (location !== null) {
      if (type === "STORIES" || item)
        throw new GraphError(400, 100, "Param location_id is not supported for this media type");
      if (!/^\d+$/.test(location)) throw new GraphError(400, 100, "Param location_id must be a valid Page ID");
      out.location_id = location;
    }
    const tags = get("user_tags");
    if (tags !== null) {
      if (type === "CAROUSEL" || type === "VIDEO")
        throw new GraphError(400, 100, "Param user_tags is not supported for this media type");
      const list = jsonArray(tags, "user_tags") as { username?: unknown; x?: unknown; y?: unknown }[];
      for (const u of list) {
        if (typeof u?.username !== "string") throw new GraphError(400, 100, "Param user_tags[username] is required");
        const placed = u.x !== undefined || u.y !== undefined;
        if (type === "REELS" && placed) throw new GraphError(400, 100, "Param user_tags on REELS takes usernames only");
        if (type === "IMAGE" && !placed)
          throw new GraphError(400, 100, "Param user_tags[x] and user_tags[y] are required");
        if (placed && ![u.x, u.y].every((n) => typeof n === "number" && n >= 0 && n <= 1))
          throw new GraphError(400, 100, "Param user_tags[x] and user_tags[y] must be numbers from 0.0 to 1.0");
      }
      out.user_tags = list;
    }
    return out;
  }

  async function createContainer(req: Request): Promise<Response> {
    const f = await graphForm(req);
    const caption = f.get("caption") ?? "";
    if ([...caption].length > CAPTION_MAX)
      throw new GraphError(400, 100, `The caption must be at most ${CAPTION_MAX} characters.`, 2207010);
    const item = f.get("is_carousel_item") === "true";
    const declared = f.get("media_type");
    const type: Container["type"] =
      declared === "CAROUSEL" || declared === "REELS" || declared === "VIDEO" || declared === "STORIES"
        ? declared
        : "IMAGE";
    if (declared === "VIDEO" && !item)
      throw new GraphError(400, 100, "media_type VIDEO is deprecated for feed posts: use REELS", 2207067);
    if (declared && !["CAROUSEL", "REELS", "VIDEO", "STORIES"].includes(declared))
      throw new GraphError(400, 100, "Param media_type is not valid");
    const c: Container = {
      id: newId(),
      type,
      caption,
      url: null,
      children: [],
      item,
      outcome: "FINISHED",
      error: null,
      checks: 0,
      published: false,
      trial: trialOf(f.get("trial_params"), type),
      cover: null,
      params: paramsOf(f, type, item),
    };
    // "the new alt_text field for image posts [...]. Reels and stories are not supported" (developers.
    // facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, 2026-11-26).
    const alt = f.get("alt_text");
    if (alt !== null) {
      if (type !== "IMAGE") throw new GraphError(400, 100, "Param alt_text is only supported for image posts");
      c.alt = alt;
    }
    if (type === "STORIES") {
      // A Story is one image or one video, given as image_url or video_url.
      const image = f.get("image_url");
      const video = f.get("video_url");
      if ((image === null) === (video === null))
        throw new GraphError(400, 100, "A STORIES container takes exactly one of image_url and video_url");
      const url = (image ?? video)!;
      if (!/^https?:\/\//.test(url)) throw new GraphError(400, 100, "Param image_url or video_url is not a valid URL");
      c.url = url;
      c.story = image !== null ? "image" : "video";
      const tags = c.params?.user_tags as { x?: number }[] | undefined;
      if (c.story === "image" && tags?.some((u) => u.x === undefined) && tags.some((u) => u.x !== undefined))
        throw new GraphError(400, 100, "Param user_tags must give x and y for every user or for none");
      c.error = await inspect(url, c.story === "video", true);
      c.outcome = c.error ? "ERROR" : "FINISHED";
    } else if (type === "IMAGE" || type === "REELS" || type === "VIDEO") {
      const url = f.get(type === "IMAGE" ? "image_url" : "video_url") ?? "";
      if (!/^https?:\/\//.test(url))
        throw new GraphError(400, 100, `Param ${type === "IMAGE" ? "image_url" : "video_url"} is required`);
      c.url = url;
      c.error = await inspect(url, type !== "IMAGE");
      const cover = f.get("cover_url");
      if (!c.error && type === "REELS" && cover) {
        const checked = await inspectCover(cover);
        if (typeof checked === "string") c.error = checked;
        else c.cover = checked;
      }
      c.outcome = c.error ? "ERROR" : "FINISHED";
    } else {
      c.children = (f.get("children") ?? "").split(",").filter(Boolean);
      if (c.children.length < 2 || c.children.length > 10)
        throw new GraphError(400, 100, "A carousel needs 2 to 10 children", 2207050);
      for (const id of c.children) {
        const child = state.containers.get(id);
        if (!child || !child.item) throw new GraphError(400, 100, `Param children contains an invalid container ${id}`);
        if (child.outcome === "ERROR") {
          c.outcome = "ERROR";
          c.error = child.error;
        }
      }
    }
    state.containers.set(c.id, c);
    return Response.json({ id: c.id });
  }

  function statusCode(c: Container) {
    if (c.published) return "PUBLISHED";
    if (c.checks++ < 1) return "IN_PROGRESS";
    return c.outcome;
  }

  function publishContainer(id: string): Response {
    const c = state.containers.get(id);
    if (!c || c.item) throw new GraphError(400, 100, "Param creation_id is not a valid container", 2207008);
    if (c.published) throw new GraphError(400, 100, "The media was already published", 2207008);
    if (c.outcome !== "FINISHED" || c.checks < 1) throw new GraphError(400, 9007, "Media ID is not available", 2207027);
    c.published = true;
    const m: Media = {
      id: newId(),
      container: c,
      createdAt: new Date(),
      views: 0,
      likes: 0,
      comments: 0,
      shares: 0,
      saved: 0,
    };
    state.media.push(m);
    const items = c.type === "CAROUSEL" ? c.children.map((k) => state.containers.get(k)!) : [c];
    state.emulated.push({
      id: m.id,
      text: c.caption,
      media: items.map((i) => ({
        type: i.type === "IMAGE" || i.story === "image" ? "image" : "video",
        ...(i.alt !== undefined && { alt: i.alt }),
      })),
      createdAt: m.createdAt,
      options: {
        placement: c.type === "STORIES" ? "story" : c.type === "REELS" ? "reels" : "feed",
        ...c.params,
        ...(c.trial && { trial_params: c.trial }),
        ...(c.cover && { cover: c.cover }),
      },
    });
    return Response.json({ id: m.id });
  }

  const mediaJson = (m: Media) => {
    const c = m.container;
    return {
      id: m.id,
      caption: c.caption,
      timestamp: m.createdAt.toISOString(),
      media_type:
        c.type === "CAROUSEL" ? "CAROUSEL_ALBUM" : c.type === "IMAGE" || c.story === "image" ? "IMAGE" : "VIDEO",
      media_product_type: c.type === "REELS" ? "REELS" : c.type === "STORIES" ? "STORY" : "FEED",
      permalink:
        c.type === "STORIES"
          ? `https://www.instagram.com/stories/${user.username}/${m.id}/`
          : `https://www.instagram.com/${c.type === "REELS" ? "reel" : "p"}/${m.id.slice(-11)}/`,
      ...(c.url && { media_url: c.url }),
      ...(c.type === "CAROUSEL" && {
        children: {
          data: c.children.map((k) => ({
            media_type: state.containers.get(k)!.type === "IMAGE" ? "IMAGE" : "VIDEO",
            media_url: state.containers.get(k)!.url,
          })),
        },
      }),
    };
  };

  /** A comment call: the media must exist, the token must carry the comment permission. */
  function commentTarget(req: Request, url: URL, mediaId: string): Media {
    const t = auth.authed(req, url, "instagram_business_basic");
    if (t.scopes && !t.scopes.includes(COMMENTING))
      throw new GraphError(403, 10, `(#10) Application does not have permission for this action: ${COMMENTING}`);
    const x = state.media.find((y) => y.id === mediaId);
    if (!x) throw new GraphError(400, 100, `Unsupported post request. Object with ID '${mediaId}' does not exist`, 33);
    return x;
  }

  async function comment(req: Request, url: URL, mediaId: string): Promise<Response> {
    const x = commentTarget(req, url, mediaId);
    // The reference shows message as a query parameter; a form body is taken as well, as Graph does.
    const message = url.searchParams.get("message") ?? (await graphForm(req)).get("message") ?? "";
    if (!message.trim()) throw new GraphError(400, 100, "(#100) The parameter message is required");
    if ([...message].length > COMMENT_MAX)
      throw new GraphError(400, 100, `(#100) The comment is longer than ${COMMENT_MAX} characters`);
    const c: IgComment = { id: newCommentId(), media: x.id, text: message, createdAt: new Date() };
    state.comments.push(c);
    x.comments += 1;
    state.emulated.push({ id: c.id, text: message, media: [], replyTo: x.id, createdAt: c.createdAt });
    return Response.json({ id: c.id });
  }

  function listComments(req: Request, url: URL, mediaId: string): Response {
    const x = commentTarget(req, url, mediaId);
    const limit = Number(url.searchParams.get("limit") ?? 25);
    const all = state.comments.filter((c) => c.media === x.id).reverse();
    const shown = all.slice(0, limit);
    return Response.json({
      data: shown.map((c) => ({
        id: c.id,
        text: c.text,
        timestamp: c.createdAt.toISOString(),
        username: user.username,
        from: { id: user.id, username: user.username },
      })),
      ...(all.length > limit && { paging: { next: `${url.origin}${url.pathname}?after=${shown.at(-1)!.id}` } }),
    });
  }

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    const token = await auth.route(req, path, url);
    if (token) return token;
    const p = path.replace(/^\/v\d+\.\d+/, "");
    const comments = /^\/(\d+)\/comments$/.exec(p);
    if (comments && m === "POST") return comment(req, url, comments[1]);
    if (comments && m === "GET") return listComments(req, url, comments[1]);
    // Permissions per request (developers.facebook.com/docs/instagram-platform: each reference's
    // Requirements; checked 2026-11-26): instagram_business_basic for everything, content_publish to
    // create and publish containers, manage_insights for insights.
    const publishing = m === "POST" && /^\/(me|\d+)\/(media|media_publish)$/.test(p);
    const insight = /\/insights$/.test(p);
    auth.authed(
      req,
      url,
      "instagram_business_basic",
      ...(publishing ? ["instagram_business_content_publish"] : []),
      ...(insight ? ["instagram_business_manage_insights"] : []),
    );
    if (m === "GET" && p === "/me") {
      const fields = (url.searchParams.get("fields") ?? "").split(",");
      return Response.json({ ...user, ...(fields.includes("followers_count") && { followers_count: followers }) });
    }
    if (m === "POST" && (p === "/me/media" || p === `/${user.id}/media`)) return createContainer(req);
    if (m === "POST" && (p === "/me/media_publish" || p === `/${user.id}/media_publish`))
      return publishContainer((await graphForm(req)).get("creation_id") ?? "");
    if (m === "GET" && (p === "/me/media" || p === `/${user.id}/media`)) {
      return Response.json({
        // Stories are listed on /{ig-user-id}/stories, not among the media (IG User Stories reference).
        data: state.media
          .filter((x) => x.container.type !== "STORIES")
          .reverse()
          .slice(0, Number(url.searchParams.get("limit") ?? 25))
          .map(mediaJson),
      });
    }
    const insights = /^\/(\d+)\/insights$/.exec(p);
    if (m === "GET" && insights) {
      const x = state.media.find((y) => y.id === insights[1]);
      if (!x) throw new GraphError(400, 100, "Object does not exist");
      const values: Record<string, number> = {
        views: x.views,
        likes: x.likes,
        comments: x.comments,
        shares: x.shares,
        saved: x.saved,
        reach: x.views,
      };
      const names = (url.searchParams.get("metric") ?? "").split(",");
      const unknown = names.find((n) => !(n in values));
      if (unknown)
        throw new GraphError(
          400,
          100,
          `(#100) metric[0] must be one of the following values: ${Object.keys(values).join(", ")}`,
        );
      return Response.json({
        data: names.map((n) => ({ name: n, period: "lifetime", values: [{ value: values[n] }] })),
      });
    }
    const node = /^\/(\d+)$/.exec(p);
    if (m === "GET" && node) {
      const c = state.containers.get(node[1]);
      if (c) {
        const code = statusCode(c);
        return Response.json({
          id: c.id,
          status_code: code,
          status: c.error && code === "ERROR" ? c.error : `${code}`,
        });
      }
      const x = state.media.find((y) => y.id === node[1]);
      if (x) return Response.json(mediaJson(x));
      throw new GraphError(400, 100, `Unsupported get request. Object with ID '${node[1]}' does not exist`, 33);
    }
    throw new GraphError(400, 100, `Unknown path ${m} ${path}`);
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "instagram",
    state: emulatorState({ state, auth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...graphFailingHandler({
      failures,
      canFail: (path) => /^\/v\d/.test(path),
      route: (req, path) => route(req, path, new URL(req.url)),
      apiType: "IGApiException",
      expired: auth.expired(),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      followers = n;
    },
    advanceClock: (ms) => auth.advance(ms),
    reset() {
      failures.clear();
      auth.reset();
      state.reset();
    },
    engage(id, counts) {
      const x = state.media.find((y) => y.id === id);
      if (!x) throw new Error(`no media ${id}`);
      addCounts(x, counts);
    },
  };
}

export default defineEmulator((opts) => createInstagramEmulator(opts));
