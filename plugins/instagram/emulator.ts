/**
 * An emulator of the Instagram Login and Graph content-publishing surface the plugin uses: OAuth (code
 * exchange with id and secret in the body, long-lived exchange, refresh), media containers (JPEG image,
 * REELS, a Trial Reel with trial_params, carousel of 2–10 with VIDEO children) whose media it really
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
  type: "IMAGE" | "REELS" | "VIDEO" | "CAROUSEL";
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
  async function inspect(url: string, video: boolean): Promise<string | null> {
    const seen = await pullMedia(url, opts.pullMedia);
    if (seen === null) return "ERROR: media could not be fetched from the URL (2207052)";
    if (!video) {
      const b = breach(seen, IMAGE_RULE);
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
    const b = breach(seen, REELS_RULE);
    return b ? `ERROR: the video does not meet the Reels specifications: ${b.message} (2207026)` : null;
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

  async function createContainer(req: Request): Promise<Response> {
    const f = await graphForm(req);
    const caption = f.get("caption") ?? "";
    if ([...caption].length > CAPTION_MAX)
      throw new GraphError(400, 100, `The caption must be at most ${CAPTION_MAX} characters.`, 2207010);
    const item = f.get("is_carousel_item") === "true";
    const declared = f.get("media_type");
    const type: Container["type"] =
      declared === "CAROUSEL" ? "CAROUSEL" : declared === "REELS" ? "REELS" : declared === "VIDEO" ? "VIDEO" : "IMAGE";
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
    };
    // "the new alt_text field for image posts [...]. Reels and stories are not supported" (developers.
    // facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, 2026-11-26).
    const alt = f.get("alt_text");
    if (alt !== null) {
      if (type !== "IMAGE") throw new GraphError(400, 100, "Param alt_text is only supported for image posts");
      c.alt = alt;
    }
    if (type === "IMAGE" || type === "REELS" || type === "VIDEO") {
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
        type: i.type === "IMAGE" ? "image" : "video",
        ...(i.alt !== undefined && { alt: i.alt }),
      })),
      createdAt: m.createdAt,
      ...((c.trial || c.cover) && {
        options: { ...(c.trial && { trial_params: c.trial }), ...(c.cover && { cover: c.cover }) },
      }),
    });
    return Response.json({ id: m.id });
  }

  const mediaJson = (m: Media) => {
    const c = m.container;
    return {
      id: m.id,
      caption: c.caption,
      timestamp: m.createdAt.toISOString(),
      media_type: c.type === "CAROUSEL" ? "CAROUSEL_ALBUM" : c.type === "IMAGE" ? "IMAGE" : "VIDEO",
      media_product_type: c.type === "REELS" ? "REELS" : "FEED",
      permalink: `https://www.instagram.com/${c.type === "REELS" ? "reel" : "p"}/${m.id.slice(-11)}/`,
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
        data: [...state.media]
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
