/**
 * Reels and Stories on a Facebook Page (platform_options.placement: feed, reels or story), beside the feed
 * posts of index.ts. Sources, read 2026-11-26:
 * - Reels Publishing API (developers.facebook.com/docs/video-api/guides/reels-publishing): POST
 *   /{page-id}/video_reels with upload_phase=start answers {video_id, upload_url}; the bytes go to the
 *   upload_url on rupload.facebook.com with "Authorization: OAuth <page token>", offset and file_size
 *   headers; POST /{page-id}/video_reels with upload_phase=finish, the video_id, video_state=PUBLISHED and
 *   the description publishes it; the Video node's status tells when it is done. Reels: MP4, 9:16, at
 *   least 540 × 960, 24 to 60 fps, 3 to 90 seconds; 30 API-published Reels per Page in 24 hours.
 * - Facebook Stories API (developers.facebook.com/docs/page-stories-api): a video Story is the same
 *   three phases on /{page-id}/video_stories (finish answers {success, post_id}); a photo Story is a photo
 *   uploaded with published=false, then POST /{page-id}/photo_stories with its photo_id. Video Stories
 *   have the Reels specifications but at most 60 seconds; the media must not have been used in a post.
 * Pages take a Story's media only: its text is not sent.
 */
import {
  unreadableMedia,
  type OptionProblem,
  type OptionTarget,
  type DeclaredMediaRequirements,
  type FailureOutcome,
  type MediaBody,
  type MediaItem,
  type PluginContext,
} from "../../src/platform/sdk.ts";
import { mediaRequired } from "../../src/platform/limits.ts";

export const PLACEMENTS = ["feed", "reels", "story"] as const;
export type Placement = (typeof PLACEMENTS)[number];
export interface Options {
  placement?: Placement;
}
type Fail = FailureOutcome;

export const placementOf = (o: Options): Placement =>
  PLACEMENTS.includes(o.placement as Placement) ? (o.placement as Placement) : "feed";

/** Where Meta's upload service lives; the start call names the exact upload_url on it. */
const RUPLOAD = "https://rupload.facebook.com";

/** The Reels and Stories video specifications, over the feed's declaration. */
export function requirementsFor(feed: DeclaredMediaRequirements, o: Options): DeclaredMediaRequirements {
  const placement = placementOf(o);
  if (placement === "feed") return feed;
  const video = {
    minVideoWidth: 540,
    minVideoHeight: 960,
    minFrameRate: 24,
    maxFrameRate: 60,
  };
  const reels = placement === "reels";
  return {
    ...feed,
    file_constraints: {
      ...feed.file_constraints,
      ...video,
      maxFiles: 1,
      maxImageFiles: reels ? 0 : 1,
      maxVideoFiles: 1,
      maxGifFiles: reels ? 0 : 1,
    },
    required_media: reels
      ? mediaRequired("Facebook Reels", ["video"], "one video")
      : mediaRequired("Facebook Stories", ["image", "video"], "one image or one video"),
    min_video_duration_seconds: 3,
    max_video_duration_seconds: reels ? 90 : 60,
    aspect_ratio: { video: { min: "9:16", max: "9:16" }, recommended: "9:16" },
  };
}

/** A Page Story takes no comments: a first comment is refused at creation. */
export function optionProblems(t: OptionTarget<Options>): OptionProblem[] {
  if (placementOf(t.options) !== "story" || !t.firstComment) return [];
  return [
    {
      code: "first_comment_unsupported",
      message: "a Facebook Story takes no comments, so it cannot have a first_comment.",
      hint: "Remove first_comment from this target, or publish to the feed or as a Reel.",
      field: "first_comment",
    },
  ];
}

const auth = (ctx: PluginContext) => ({ authorization: `Bearer ${String(ctx.credentials.page_access_token)}` });

/** The upload_url the start call gave, if it is Meta's upload service (or the emulator this client talks to). */
function trustedUploadUrl(ctx: PluginContext, url: unknown): string | null {
  if (typeof url !== "string") return null;
  try {
    const u = new URL(url);
    if (u.origin === RUPLOAD && u.protocol === "https:") return url;
  } catch {
    return null;
  }
  // Tests and sandbox profiles talk to an emulator, which names an upload address beside itself.
  return url.startsWith(ctx.http.baseUrl + "/") ? url : null;
}

/**
 * The first two phases: an upload session on the Page's edge (video_reels or video_stories) and the file
 * streamed to the upload_url. The video_id, or why not. Nothing is on the Page yet.
 */
export async function uploadPhases(
  ctx: PluginContext,
  edge: string,
  item: MediaItem,
  version: string,
): Promise<string | Fail> {
  let body: MediaBody;
  let size: number;
  let bytes: Uint8Array | null = null;
  try {
    body = await ctx.media.open(item);
    size = body.size ?? (bytes = await body.bytes()).length;
  } catch (e) {
    return unreadableMedia(e);
  }
  const start = await ctx.http.request<{ video_id?: string; upload_url?: string }>(
    "POST",
    `${version}/${ctx.account.remoteId}/${edge}`,
    { form: { upload_phase: "start" }, headers: auth(ctx) },
  );
  if (!start.ok) return start.outcome;
  const uploadUrl = trustedUploadUrl(ctx, start.body.upload_url);
  if (!start.body.video_id || !uploadUrl)
    return {
      kind: "permanent",
      reason: "Facebook's upload session named no usable upload address",
      code: "upload_failed",
    };
  const sent = await ctx.http.request<{ success?: boolean }>("POST", uploadUrl, {
    headers: {
      authorization: `OAuth ${String(ctx.credentials.page_access_token)}`,
      offset: "0",
      file_size: String(size),
      "content-type": "application/octet-stream",
    },
    body: (bytes ?? body.stream()) as BodyInit,
    timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 30 * 60_000),
  });
  if (!sent.ok) return sent.outcome;
  if (sent.body.success !== true) return { kind: "retryable", reason: "Facebook did not confirm the video's bytes" };
  return start.body.video_id;
}

/** Publishes a Reel: start, upload, then finish with video_state PUBLISHED (the creating call). Its video id. */
export async function publishReel(
  ctx: PluginContext,
  item: MediaItem,
  description: string,
  version: string,
): Promise<string | Fail> {
  const id = await uploadPhases(ctx, "video_reels", item, version);
  if (typeof id !== "string") return id;
  const res = await ctx.http.request<{ success?: boolean }>("POST", `${version}/${ctx.account.remoteId}/video_reels`, {
    form: {
      upload_phase: "finish",
      video_id: id,
      video_state: "PUBLISHED",
      ...(description && { description }),
    },
    headers: auth(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return res.body.success === true
    ? id
    : { kind: "unknown", reason: "Facebook answered the Reel's finish call without success" };
}

/** Publishes a Story of a video (video_stories, three phases) or of a photo (photo_stories). Its post id. */
export async function publishStory(
  ctx: PluginContext,
  item: MediaItem,
  version: string,
  unpublishedPhoto: () => Promise<{ id: string } | Fail>,
): Promise<string | Fail> {
  let form: Record<string, string>;
  let edge: string;
  if (item.type === "video") {
    const id = await uploadPhases(ctx, "video_stories", item, version);
    if (typeof id !== "string") return id;
    edge = "video_stories";
    form = { upload_phase: "finish", video_id: id };
  } else {
    const photo = await unpublishedPhoto();
    if ("kind" in photo) return photo;
    edge = "photo_stories";
    form = { photo_id: photo.id };
  }
  const res = await ctx.http.request<{ success?: boolean; post_id?: string }>(
    "POST",
    `${version}/${ctx.account.remoteId}/${edge}`,
    { form, headers: auth(ctx), creates: true },
  );
  if (!res.ok) return res.outcome;
  return res.body.post_id ?? { kind: "unknown", reason: "Facebook answered the Story without its post_id" };
}
