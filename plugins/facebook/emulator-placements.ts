/**
 * The Facebook emulator's Reels and Stories on a Page, as the Reels Publishing API
 * (developers.facebook.com/docs/video-api/guides/reels-publishing) and the Facebook Stories API
 * (developers.facebook.com/docs/page-stories-api) describe them, both read 2026-11-26:
 * - POST /{page-id}/video_reels or /video_stories with upload_phase=start answers {video_id, upload_url};
 * - POST {upload_url} (rupload.facebook.com/video-upload/{version}/{video_id}) with "Authorization: OAuth
 *   <page token>", `offset` and `file_size` headers and the bytes answers {success: true};
 * - finish: video_reels with video_id and video_state (PUBLISHED, DRAFT or SCHEDULED) answers
 *   {success: true} and the Reel is processed (the Video node's status); video_stories with the video_id
 *   answers {success: true, post_id};
 * - POST /{page-id}/photo_stories with the photo_id of an unpublished photo of the Page answers
 *   {success: true, post_id}; media used in a post before is refused.
 * The file is read as Facebook would: MP4, 9:16, at least 540 × 960, 24–60 fps, 3–90 seconds for a Reel
 * and 3–60 for a video Story. A Reel out of spec fails in processing; a Story's finish call refuses it.
 */
import { breach, inspectMedia, type MediaRule, type MediaSeen } from "../../src/platform/emulator-media.ts";
import { GraphError } from "../../src/platform/graph-emulator.ts";

/** An upload session of video_reels or video_stories. */
export interface ReelSession {
  id: string;
  page: string;
  edge: "video_reels" | "video_stories";
  received: number;
  size: number | null;
  /** What the complete file is, once it arrived. */
  seen: MediaSeen | null;
  finished: boolean;
}

const VERTICAL: MediaRule = {
  types: ["video/mp4"],
  minWidth: 540,
  minHeight: 960,
  minAspect: (9 / 16) * 0.99,
  maxAspect: (9 / 16) * 1.01,
  minFrameRate: 24,
  maxFrameRate: 60,
  minDuration: 3,
};
export const REEL_RULE: MediaRule = { ...VERTICAL, maxDuration: 90 };
export const STORY_VIDEO_RULE: MediaRule = { ...VERTICAL, maxDuration: 60 };

interface Page {
  id: string;
  token: string;
}

export interface PlacementDeps {
  sessions: Map<string, ReelSession>;
  pageAuth(req: Request, url: URL, pageId: string): Page;
  /** The page whose token this is, for the upload host (which has no page id in its path). */
  pageOfToken(token: string): Page | undefined;
  form(req: Request): Promise<Map<string, FormDataEntryValue>>;
  newId(): string;
  /** A Reel: a Page video processed over status reads, failing when `error`. */
  addReel(page: string, videoId: string, description: string, error: string | null): void;
  /** A Story's post; the photo's id, or a video. */
  addStory(page: string, media: { photo?: string; video?: string }): string;
  /** Takes an unpublished photo of the page for a Story: refuses another page's, a published or a used one. */
  takePhoto(page: string, photoId: string): void;
}

/** Where the emulator takes the bytes: beside itself, under the path its caller reached it by. */
function uploadUrl(req: Request, path: string, id: string): string {
  const u = new URL(req.url);
  const base = u.pathname.endsWith(path) ? u.pathname.slice(0, u.pathname.length - path.length) : "";
  return `${u.origin}${base}/video-upload/v24.0/${id}`;
}

export async function placementRoute(d: PlacementDeps, req: Request, path: string, url: URL): Promise<Response | null> {
  if (req.method !== "POST") return null;
  const p = path.replace(/^\/v\d+\.\d+/, "");
  const upload = /^\/video-upload\/v\d+\.\d+\/(\d+)$/.exec(path);
  if (upload) return receive(d, req, upload[1]);
  const edge = /^\/(\d+)\/(video_reels|video_stories|photo_stories)$/.exec(p);
  if (!edge) return null;
  const page = d.pageAuth(req, url, edge[1]);
  const f = await d.form(req);
  const field = (k: string) => (typeof f.get(k) === "string" ? String(f.get(k)) : null);
  if (edge[2] === "photo_stories") {
    const photo = field("photo_id");
    if (!photo) throw new GraphError(400, 100, "(#100) The parameter photo_id is required");
    d.takePhoto(page.id, photo);
    return Response.json({ success: true, post_id: d.addStory(page.id, { photo }) });
  }
  const kind = edge[2] as ReelSession["edge"];
  const phase = field("upload_phase");
  if (phase === "start") {
    const s: ReelSession = {
      id: d.newId(),
      page: page.id,
      edge: kind,
      received: 0,
      size: null,
      seen: null,
      finished: false,
    };
    d.sessions.set(s.id, s);
    return Response.json({ video_id: s.id, upload_url: uploadUrl(req, path, s.id) });
  }
  if (phase !== "finish") throw new GraphError(400, 100, "(#100) upload_phase must be one of {start, finish}");
  const s = d.sessions.get(field("video_id") ?? "");
  if (!s || s.page !== page.id || s.edge !== kind)
    throw new GraphError(400, 100, "(#100) The video_id is not an upload session of this Page");
  if (s.finished) throw new GraphError(400, 100, "(#100) The video was already published");
  if (!s.seen)
    throw new GraphError(400, 6000, "There was a problem uploading your video file: no bytes were received", 1363019);
  if (kind === "video_reels") {
    const state = field("video_state");
    if (!state || !["PUBLISHED", "DRAFT", "SCHEDULED"].includes(state))
      throw new GraphError(400, 100, "(#100) video_state must be one of {DRAFT, PUBLISHED, SCHEDULED}");
    s.finished = true;
    const b = breach(s.seen, REEL_RULE);
    d.addReel(
      page.id,
      s.id,
      field("description") ?? "",
      b ? `The video does not meet the Reels specifications: ${b.message}` : null,
    );
    return Response.json({ success: true });
  }
  const b = breach(s.seen, STORY_VIDEO_RULE);
  if (b) throw new GraphError(400, 100, `(#100) The video cannot be published as a story: ${b.message}`, 1363040);
  s.finished = true;
  return Response.json({ success: true, post_id: d.addStory(page.id, { video: s.id }) });
}

/** The upload host: the whole file from `offset` 0, as long as `file_size` says, with the Page's token. */
async function receive(d: PlacementDeps, req: Request, id: string): Promise<Response> {
  const s = d.sessions.get(id);
  if (!s) throw new GraphError(400, 100, "Invalid upload session", 2069021);
  const token = /^OAuth (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
  if (d.pageOfToken(token)?.id !== s.page) throw new GraphError(400, 190, "Invalid OAuth access token.");
  const size = Number(req.headers.get("file_size"));
  if (!Number.isInteger(size) || size <= 0) throw new GraphError(400, 100, "The file_size header is required");
  if (Number(req.headers.get("offset")) !== s.received)
    throw new GraphError(400, 100, `The offset header must be ${s.received}`);
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (bytes.byteLength !== size) throw new GraphError(400, 100, "The body is not file_size bytes long");
  s.received = size;
  s.size = size;
  const seen = inspectMedia(bytes);
  // Kept as plain facts: the emulator's state is saved for sandbox profiles.
  s.seen = {
    mime: seen.mime,
    bytes: seen.bytes,
    width: seen.width,
    height: seen.height,
    duration: seen.duration,
    frameRate: seen.frameRate ?? null,
    codec: seen.codec ?? null,
  };
  return Response.json({ success: true });
}
