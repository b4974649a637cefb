/**
 * An emulator of the Threads API surface the plugin uses: OAuth (authorize, code exchange with id and
 * secret in the body, long-lived exchange, refresh), containers (TEXT, IMAGE, VIDEO, CAROUSEL of 2–20
 * items) whose media it really downloads and checks, status moving IN_PROGRESS → FINISHED or ERROR over
 * status checks, threads_publish, permalinks, the user's posts and insights. Errors are Graph errors
 * `{error:{message, type, code, error_subcode}}`.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user sandbox.threads.
 * Tokens age on the emulator's clock (createThreadsEmulator({ now }), advanceClock): a long-lived token lasts 60
 * days, and refresh_access_token refuses one younger than 24 hours or already expired, as Meta does.
 * Fidelity note: an injected auth_expired failure answers 190 once without expiring the token (a session
 * invalidated and restored); a token that really expired is never refreshed.
 */
import { defineEmulator, type EmulatedPost, type Emulator, type EmulatorOptions } from "../../src/platform/sdk.ts";
import { addCounts, FailurePlan, resettable, emulatorState } from "../../src/platform/emulator-kit.ts";
import { breach, pullMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import {
  GraphError,
  graphFailingHandler,
  graphForm,
  graphId,
  LongLivedTokens,
} from "../../src/platform/graph-emulator.ts";

// "Text posts are limited to 500 characters. Emojis are counted as the number of UTF-8 bytes."
// (developers.facebook.com/docs/threads/posts, Limitations; checked 2026-11-26)
const TEXT_MAX = 500;
const LINKS_MAX = 5;

// Media specifications (developers.facebook.com/docs/threads/overview, "Media Specifications"; checked
// 2026-11-26): images JPEG or PNG, 8 MB at most, aspect ratio at most 10:1 (widths outside 320–1440 are
// scaled, not refused); video MOV or MP4, HEVC or H.264, 23–60 fps, at most 1920 columns, aspect ratio
// 0.01:1 to 10:1, longer than 0 s and at most 300 s, 1 GB at most. A container out of spec ends in ERROR
// with one of the messages the troubleshooting page lists (developers.facebook.com/docs/threads/
// troubleshooting, checked 2026-11-26): INVALID_DURATION, INVALID_ASPEC_RATIO, INVALID_FRAME_RATE, …
const IMAGE_RULE: MediaRule = {
  types: ["image/jpeg", "image/png"],
  maxBytes: 8 * 1024 * 1024,
  minAspect: 1 / 10,
  maxAspect: 10,
};
const VIDEO_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime"],
  codecs: ["avc1", "avc3", "hvc1", "hev1"],
  minFrameRate: 23,
  maxFrameRate: 60,
  maxWidth: 1920,
  minAspect: 0.01,
  maxAspect: 10,
  maxDuration: 300,
  maxBytes: 1024 * 1024 * 1024,
};
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const emoji = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;
const threadsLength = (text: string) =>
  [...graphemes.segment(text)].reduce(
    (n, { segment }) => n + (emoji.test(segment) ? Buffer.byteLength(segment) : [...segment].length),
    0,
  );
const LONG_TTL_S = 60 * 86400;

interface Container {
  id: string;
  type: "TEXT" | "IMAGE" | "VIDEO" | "CAROUSEL";
  text: string;
  url: string | null;
  replyTo: string | null;
  children: string[];
  item: boolean;
  /** alt_text as sent (image and video containers only). */
  alt?: string;
  outcome: "FINISHED" | "ERROR";
  error: string | null;
  checks: number;
  published: boolean;
}

interface Post {
  id: string;
  container: Container;
  createdAt: Date;
  views: number;
  likes: number;
  replies: number;
  reposts: number;
  quotes: number;
  shares: number;
}

export interface ThreadsEmulator extends Emulator {
  engage(id: string, counts: Partial<Pick<Post, "views" | "likes" | "reposts" | "quotes">>): void;
}

const newId = graphId(17_000_000_000_000_000n);

export function createThreadsEmulator(opts: EmulatorOptions & { now?: () => number } = {}): ThreadsEmulator {
  const failures = new FailurePlan();
  const user = { id: "25000000000000001", username: "sandbox.threads" };
  const auth = new LongLivedTokens({
    prefix: "TH",
    exchangeGrant: "th_exchange_token",
    refreshGrant: "th_refresh_token",
    now: opts.now,
    expiredStatus: 401,
    codeAnswer: { user_id: Number(user.id.slice(0, 15)) },
  });
  const state = resettable(() => ({
    containers: new Map<string, Container>(),
    posts: [] as Post[],
    emulated: [] as EmulatedPost[],
  }));

  /** Threads downloads the media itself; a URL it cannot fetch, or media out of spec, fails the container. */
  async function inspect(url: string, kind: "IMAGE" | "VIDEO"): Promise<string | null> {
    const seen = await pullMedia(url, opts.pullMedia);
    if (seen === null) return kind === "VIDEO" ? "FAILED_DOWNLOADING_VIDEO" : "FAILED_DOWNLOADING_IMAGE";
    const b = breach(seen, kind === "IMAGE" ? IMAGE_RULE : VIDEO_RULE);
    if (!b) return null;
    if (b.rule === "types") return kind === "IMAGE" ? "UNSUPPORTED_IMAGE_FORMAT" : "UNSUPPORTED_VIDEO_FORMAT";
    if (kind === "IMAGE") return "UNKNOWN"; // the troubleshooting page lists no image-specific message
    if (b.rule === "minDuration" || b.rule === "maxDuration") return "INVALID_DURATION";
    if (b.rule === "minAspect" || b.rule === "maxAspect") return "INVALID_ASPEC_RATIO"; // sic, as documented
    if (b.rule === "minFrameRate" || b.rule === "maxFrameRate") return "INVALID_FRAME_RATE";
    return "FAILED_PROCESSING_VIDEO";
  }

  async function createContainer(req: Request, scopes: string[] | undefined): Promise<Response> {
    const f = await graphForm(req);
    if (f.get("reply_to_id") && scopes && !scopes.includes("threads_manage_replies"))
      throw new GraphError(
        400,
        10,
        "(#10) Application does not have permission for this action: threads_manage_replies",
      );
    const type = f.get("media_type") as Container["type"];
    if (!["TEXT", "IMAGE", "VIDEO", "CAROUSEL"].includes(type))
      throw new GraphError(400, 100, "Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}");
    const text = f.get("text") ?? "";
    // "Starting December 22, 2025, Threads posts containing more than 5 links will fail to post during
    // the media creation step ... THREADS_API__LINK_LIMIT_EXCEEDED"; every unique URL of the text counts.
    // (developers.facebook.com/docs/threads/create-posts/text-attachments, Limitations; checked 2026-11-26)
    const links = new Set(text.match(/\b(?:https?:\/\/|www\.)[^\s]+/gi) ?? []);
    if (links.size > LINKS_MAX)
      throw new GraphError(400, 100, `THREADS_API__LINK_LIMIT_EXCEEDED: a post may contain at most ${LINKS_MAX} links`);
    if (threadsLength(text) > TEXT_MAX)
      throw new GraphError(400, 100, `Param text must be at most ${TEXT_MAX} characters long.`);
    const replyTo = f.get("reply_to_id");
    if (replyTo && !state.posts.some((p) => p.id === replyTo))
      throw new GraphError(400, 100, "Param reply_to_id is not a valid Threads post", 4279009);
    const c: Container = {
      id: newId(),
      type,
      text,
      url: null,
      replyTo,
      children: [],
      item: f.get("is_carousel_item") === "true",
      outcome: "FINISHED",
      error: null,
      checks: 0,
      published: false,
    };
    if (type === "TEXT" && !text) throw new GraphError(400, 100, "Param text is required for TEXT posts");
    // "alt_text — (For images and videos only.)"; "This feature isn't available for text-only posts"
    // (developers.facebook.com/docs/threads/posts/accessibility, 2026-11-26).
    const alt = f.get("alt_text");
    if (alt !== null) {
      if (type !== "IMAGE" && type !== "VIDEO")
        throw new GraphError(400, 100, "Param alt_text is only available for images and videos");
      c.alt = alt;
    }
    if (type === "IMAGE" || type === "VIDEO") {
      const url = f.get(type === "IMAGE" ? "image_url" : "video_url") ?? "";
      if (!/^https?:\/\//.test(url))
        throw new GraphError(400, 100, `Param ${type === "IMAGE" ? "image_url" : "video_url"} must be a URL`);
      c.url = url;
      c.error = await inspect(url, type);
      c.outcome = c.error ? "ERROR" : "FINISHED";
    }
    if (type === "CAROUSEL") {
      c.children = (f.get("children") ?? "").split(",").filter(Boolean);
      if (c.children.length < 2 || c.children.length > 20)
        throw new GraphError(400, 100, "A carousel needs 2 to 20 children");
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

  function status(c: Container) {
    // Media containers take a moment: the first check sees IN_PROGRESS.
    if (c.published) return "PUBLISHED";
    if (c.type !== "TEXT" && c.checks++ < 1) return "IN_PROGRESS";
    return c.outcome;
  }

  function publishContainer(id: string): Response {
    const c = state.containers.get(id);
    if (!c || c.item) throw new GraphError(400, 100, "Param creation_id is not a valid container", 4279009);
    if (c.published) throw new GraphError(400, 100, "The container was already published", 4279013);
    if (c.outcome !== "FINISHED" || (c.type !== "TEXT" && c.checks < 1))
      throw new GraphError(400, 9007, "The media is not ready for publishing, please wait for a moment", 2207027);
    c.published = true;
    const post: Post = {
      id: newId(),
      container: c,
      createdAt: new Date(),
      views: 0,
      likes: 0,
      replies: 0,
      reposts: 0,
      quotes: 0,
      shares: 0,
    };
    const parent = c.replyTo ? state.posts.find((p) => p.id === c.replyTo) : undefined;
    if (parent) parent.replies += 1;
    state.posts.push(post);
    const items =
      c.type === "CAROUSEL" ? c.children.map((k) => state.containers.get(k)!) : c.type === "TEXT" ? [] : [c];
    state.emulated.push({
      id: post.id,
      text: c.text,
      media: items.map((i) => ({
        type: i.type === "VIDEO" ? "video" : "image",
        ...(i.alt !== undefined && { alt: i.alt }),
      })),
      replyTo: c.replyTo,
      createdAt: post.createdAt,
    });
    return Response.json({ id: post.id });
  }

  const postJson = (p: Post) => {
    const c = p.container;
    const mediaUrl = c.type === "IMAGE" || c.type === "VIDEO" ? { media_url: c.url } : {};
    return {
      id: p.id,
      media_type: c.type === "TEXT" ? "TEXT_POST" : c.type === "CAROUSEL" ? "CAROUSEL_ALBUM" : c.type,
      text: c.text,
      timestamp: p.createdAt.toISOString(),
      permalink: `https://www.threads.com/@${user.username}/post/${p.id.slice(-11)}`,
      is_quote_post: false,
      ...mediaUrl,
      ...(c.type === "CAROUSEL" && {
        children: {
          data: c.children.map((k) => ({
            media_type: state.containers.get(k)!.type,
            media_url: state.containers.get(k)!.url,
          })),
        },
      }),
    };
  };

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    const token = await auth.route(req, path, url);
    if (token) return token;
    // Permissions per request (developers.facebook.com/docs/threads/get-started, checked 2026-11-26):
    // threads_basic for every endpoint, threads_content_publish for publishing, threads_manage_insights
    // for insights; threads_manage_replies for a reply (checked where the container is created).
    const publishing = m === "POST" && /\/(threads|threads_publish)$/.test(path);
    const insight = /\/(insights|threads_insights)$/.test(path);
    const granted = auth.authed(
      req,
      url,
      "threads_basic",
      ...(publishing ? ["threads_content_publish"] : []),
      ...(insight ? ["threads_manage_insights"] : []),
    );
    if (m === "GET" && path === "/v1.0/me") return Response.json(user);
    if (m === "GET" && (path === "/v1.0/me/threads_insights" || path === `/v1.0/${user.id}/threads_insights`)) {
      if (url.searchParams.get("metric") !== "followers_count")
        throw new GraphError(400, 100, "metric must be followers_count here.");
      return Response.json({
        data: [
          {
            name: "followers_count",
            period: "day",
            title: "followers_count",
            total_value: { value: followers },
            id: `${user.id}/insights/followers_count/day`,
          },
        ],
      });
    }
    if (m === "POST" && (path === "/v1.0/me/threads" || path === `/v1.0/${user.id}/threads`))
      return createContainer(req, granted.scopes);
    if (m === "POST" && (path === "/v1.0/me/threads_publish" || path === `/v1.0/${user.id}/threads_publish`))
      return publishContainer((await graphForm(req)).get("creation_id") ?? "");
    if (m === "GET" && (path === "/v1.0/me/threads" || path === `/v1.0/${user.id}/threads`)) {
      const since = Number(url.searchParams.get("since") ?? 0);
      const list = state.posts
        .filter((p) => !p.container.replyTo && p.createdAt.getTime() / 1000 >= since)
        .reverse()
        .slice(0, Number(url.searchParams.get("limit") ?? 25));
      return Response.json({ data: list.map(postJson) });
    }
    const insights = /^\/v1\.0\/(\d+)\/insights$/.exec(path);
    if (m === "GET" && insights) {
      const p = state.posts.find((x) => x.id === insights[1]);
      if (!p) throw new GraphError(400, 100, "Object does not exist");
      const names = (url.searchParams.get("metric") ?? "").split(",");
      const value = (n: string) =>
        (
          ({
            views: p.views,
            likes: p.likes,
            replies: p.replies,
            reposts: p.reposts,
            quotes: p.quotes,
            shares: p.shares,
          }) as Record<string, number>
        )[n];
      return Response.json({
        data: names
          .filter((n) => value(n) !== undefined)
          .map((n) => ({
            name: n,
            period: "lifetime",
            values: [{ value: value(n) }],
            id: `${p.id}/insights/${n}/lifetime`,
          })),
      });
    }
    const node = /^\/v1\.0\/(\d+)$/.exec(path);
    if (m === "GET" && node) {
      const c = state.containers.get(node[1]);
      if (c) return Response.json({ id: c.id, status: status(c), ...(c.error && { error_message: c.error }) });
      const p = state.posts.find((x) => x.id === node[1]);
      if (p) return Response.json(postJson(p));
      throw new GraphError(400, 100, `Unsupported get request. Object with ID '${node[1]}' does not exist`, 33);
    }
    throw new GraphError(400, 100, `Unknown path ${m} ${path}`);
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "threads",
    state: emulatorState({ state, auth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...graphFailingHandler({
      failures,
      canFail: (path) => path.startsWith("/v1.0/"),
      route: (req, path) => route(req, path, new URL(req.url)),
      apiType: "THApiException",
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
      const p = state.posts.find((x) => x.id === id);
      if (!p) throw new Error(`no post ${id}`);
      addCounts(p, counts);
    },
  };
}

export default defineEmulator((opts) => createThreadsEmulator(opts));
