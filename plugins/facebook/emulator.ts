/**
 * An emulator of the Facebook Graph surface the plugin uses: OAuth (dialog, code exchange by GET with
 * id and secret, fb_exchange_token for a long-lived user token), /me/accounts with Page tokens, and for
 * a Page (its own token required): feed posts (message, link, attached_media of unpublished photos),
 * photos (multipart source; published or not), videos processed over status reads, permalinks, the
 * Page's posts, reaction/comment/share summaries and media-view insights. Errors are Graph errors.
 *
 * Sandbox rule: client "sandbox"/"sandbox"; the user manages one Page, "Sandbox Page" (tests can add
 * more with addPage).
 */
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
}
interface Photo {
  id: string;
  page: string;
  published: boolean;
  type: string;
}
interface Video {
  id: string;
  page: string;
  status: "processing" | "ready" | "error";
  reads: number;
}

export interface FacebookEmulator extends Emulator {
  addPage(name: string): string;
  engage(id: string, counts: Partial<Pick<Post, "reactions" | "comments" | "shares" | "views">>): void;
}

function sniffImage(b: Buffer): string | null {
  if (b[0] === 0xff && b[1] === 0xd8) return "image/jpeg";
  if (b.subarray(1, 4).toString("latin1") === "PNG") return "image/png";
  if (b.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (b.subarray(0, 2).toString("latin1") === "BM") return "image/bmp";
  if (["II*\0", "MM\0*"].includes(b.subarray(0, 4).toString("latin1"))) return "image/tiff";
  return null;
}

const num = () => String(100_000_000_000_000n + BigInt(randomBytes(5).readUIntBE(0, 5)));

export function createFacebookEmulator(): FacebookEmulator {
  const failures = new FailurePlan();
  const state = resettable(() => ({
    userTokens: new Map<string, boolean>(),
    pages: [] as Page[],
    posts: [] as Post[],
    photos: new Map<string, Photo>(),
    videos: new Map<string, Video>(),
    emulated: [] as EmulatedPost[],
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

  function pageAuth(req: Request, url: URL, pageId: string): Page {
    const page = state.pages.find((p) => p.id === pageId);
    if (!page)
      throw new GraphError(400, 100, `Unsupported post request. Object with ID '${pageId}' does not exist`, 33);
    if (tokenOf(req, url) !== page.token)
      throw new GraphError(400, 190, "Error validating access token: the token is not this Page's token.", 460);
    return page;
  }

  function ownerAuth(req: Request, url: URL, ownerPage: string) {
    return pageAuth(req, url, ownerPage);
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
    p: Omit<Post, "id" | "createdAt" | "reactions" | "comments" | "shares" | "views">,
    id?: string,
  ): Post {
    const post: Post = {
      ...p,
      id: id ?? `${p.page}_${num()}`,
      createdAt: new Date(),
      reactions: 0,
      comments: 0,
      shares: 0,
      views: 0,
    };
    state.posts.push(post);
    state.emulated.push({
      id: post.id,
      text: post.message,
      media: [...post.photos.map(() => ({ type: "image" })), ...(post.video ? [{ type: "video" }] : [])],
      createdAt: post.createdAt,
    });
    return post;
  }

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    const p = path.replace(/^\/v\d+\.\d+/, "");
    if (m === "GET" && (p === "/dialog/oauth" || path === "/oauth/authorize"))
      return codes.authorize(url, clients, () => new GraphError(400, 100, "client_id and redirect_uri are required"));
    if (m === "GET" && (p === "/oauth/access_token" || path === "/oauth/token")) {
      const q = url.searchParams;
      if (clients.get(q.get("client_id") ?? "") !== q.get("client_secret"))
        throw new GraphError(400, 1, "Error validating client secret.");
      if (q.get("grant_type") === "fb_exchange_token") {
        if (!state.userTokens.has(q.get("fb_exchange_token") ?? ""))
          throw new GraphError(400, 190, "Invalid OAuth access token.");
        const long = `EAALong${randomBytes(16).toString("hex")}`;
        state.userTokens.set(long, true);
        return Response.json({ access_token: long, token_type: "bearer", expires_in: 5184000 });
      }
      if (!codes.redeem(q.get("code") ?? "", q.get("redirect_uri")))
        throw new GraphError(400, 100, "Invalid verification code format.", 36007);
      const short = `EAAShort${randomBytes(16).toString("hex")}`;
      state.userTokens.set(short, false);
      return Response.json({ access_token: short, token_type: "bearer", expires_in: 5400 });
    }
    if (m === "GET" && p === "/me/accounts") {
      if (!state.userTokens.has(tokenOf(req, url))) throw new GraphError(400, 190, "Invalid OAuth access token.");
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
    const pageNode = /^\/(\d+)$/.exec(p);
    if (pageNode && m === "GET" && state.pages.some((x) => x.id === pageNode[1])) {
      const page = pageAuth(req, url, pageNode[1]);
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
      const page = pageAuth(req, url, edge[1]);
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
      const page = pageAuth(req, url, edge[1]);
      const f = await body(req);
      const source = f.get("source");
      if (!(source instanceof Blob) && !f.get("url")) throw new GraphError(400, 324, "Requires upload file", 2069019);
      // Facebook judges the file by its bytes, whatever the part says.
      const type =
        source instanceof Blob ? sniffImage(Buffer.from(await source.slice(0, 8).arrayBuffer())) : "image/jpeg";
      if (!type) throw new GraphError(400, 100, "Invalid image format", 1366046);
      const published = String(f.get("published") ?? "true") !== "false";
      const ph: Photo = { id: num(), page: page.id, published, type };
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
      const page = pageAuth(req, url, edge[1]);
      const f = await body(req);
      const source = f.get("source");
      if (!(source instanceof Blob)) throw new GraphError(400, 100, "source or file_url is required");
      const head = Buffer.from(await source.slice(0, 12).arrayBuffer());
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
      return Response.json({ id: vid.id });
    }
    if (edge && m === "GET" && edge[2] === "posts") {
      const page = pageAuth(req, url, edge[1]);
      const since = Number(url.searchParams.get("since") ?? 0);
      const list = state.posts
        .filter((x) => x.page === page.id && x.createdAt.getTime() / 1000 >= since)
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
    const insights = /^\/([\d_]+)\/insights$/.exec(p);
    if (insights && m === "GET") {
      const post = state.posts.find((x) => x.id === insights[1]);
      if (!post) throw new GraphError(400, 100, "Object does not exist");
      ownerAuth(req, url, post.page);
      const metric = url.searchParams.get("metric") ?? "";
      if (/post_impressions/.test(metric))
        throw new GraphError(400, 100, "(#100) The value must be a valid insights metric");
      return Response.json({
        data: metric.split(",").map((name) => ({ name, period: "lifetime", values: [{ value: post.views }] })),
      });
    }
    const node = /^\/([\d_]+)$/.exec(p);
    if (node && m === "GET") {
      const vid = state.videos.get(node[1]);
      const fields = url.searchParams.get("fields") ?? "";
      if (vid && fields.includes("status")) {
        ownerAuth(req, url, vid.page);
        if (vid.status === "processing" && ++vid.reads >= 2) vid.status = "ready";
        return Response.json({
          id: vid.id,
          status: {
            video_status: vid.status,
            processing_phase: {
              status: vid.status === "error" ? "error" : vid.status === "ready" ? "complete" : "in_progress",
            },
          },
        });
      }
      const post = state.posts.find((x) => x.id === node[1]);
      if (!post)
        throw new GraphError(400, 100, `Unsupported get request. Object with ID '${node[1]}' does not exist`, 33);
      ownerAuth(req, url, post.page);
      return Response.json({
        id: post.id,
        permalink_url: `https://www.facebook.com/${post.id}`,
        reactions: { data: [], summary: { total_count: post.reactions } },
        comments: { data: [], summary: { total_count: post.comments } },
        ...(post.shares && { shares: { count: post.shares } }),
      });
    }
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
      canFail: (path) => /^\/v\d+\.\d+\/\d/.test(path),
      route: (req, path) => route(req, path, new URL(req.url)),
      apiType: "GraphMethodException",
      throttled: new GraphError(400, 32, "Page request limit reached"),
      expired: new GraphError(
        400,
        190,
        "Error validating access token: The session has been invalidated because the user changed their password.",
        460,
      ),
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
    engage(id, counts) {
      const post = state.posts.find((x) => x.id === id);
      if (!post) throw new Error(`no post ${id}`);
      addCounts(post, counts);
    },
  };
}

export default defineEmulator(() => createFacebookEmulator());
