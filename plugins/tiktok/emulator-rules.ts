/**
 * The rules of TikTok's API that the emulator enforces and that come from TikTok's reference pages, kept
 * apart from the routes so each rule sits next to its source (all checked 2026-11-26). Nothing here is
 * shared with the adapter: the emulator must refuse what TikTok refuses even where the adapter misreads it.
 */
import { randomBytes } from "node:crypto";
import type { MediaRule } from "../../src/platform/emulator-media.ts";

/**
 * Which scope each /v2/user/info/ field needs. Source: "Get User Info" (developers.tiktok.com/doc/
 * tiktok-api-v2-get-user-info) and "Migration Guidance - User Info APIs Scope Migration"
 * (developers.tiktok.com/bulletin/user-info-scope-migration): username, bio_description,
 * profile_deep_link and is_verified moved from user.info.basic to user.info.profile, and the counts to
 * user.info.stats.
 */
export const USER_FIELD_SCOPES: Record<string, string> = {
  open_id: "user.info.basic",
  union_id: "user.info.basic",
  avatar_url: "user.info.basic",
  avatar_url_100: "user.info.basic",
  avatar_large_url: "user.info.basic",
  display_name: "user.info.basic",
  bio_description: "user.info.profile",
  profile_deep_link: "user.info.profile",
  is_verified: "user.info.profile",
  username: "user.info.profile",
  follower_count: "user.info.stats",
  following_count: "user.info.stats",
  likes_count: "user.info.stats",
  video_count: "user.info.stats",
};

/**
 * The scope each other endpoint needs (any one of those listed). Sources: Content Posting API reference
 * pages "Direct Post" (video.publish), "Upload" (video.upload), "Photo" (video.publish or video.upload,
 * by post_mode), "Get Post Status" (video.upload/video.publish), "Query Creator Info" (video.publish);
 * Display API "List Videos" and "Query Videos" (video.list). developers.tiktok.com/doc/…, 2026-11-26.
 */
export const ENDPOINT_SCOPES: Record<string, string[]> = {
  "/v2/post/publish/creator_info/query/": ["video.publish"],
  "/v2/post/publish/video/init/": ["video.publish"],
  "/v2/post/publish/inbox/video/init/": ["video.upload"],
  "/v2/post/publish/status/fetch/": ["video.upload", "video.publish"],
  "/v2/video/list/": ["video.list"],
  "/v2/video/query/": ["video.list"],
};

/** The scopes the emulated app is approved for in its developer portal (what a user can be asked for). */
export const APP_SCOPES = [
  "user.info.basic",
  "user.info.profile",
  "user.info.stats",
  "video.publish",
  "video.upload",
  "video.list",
];

/**
 * Token lifetimes. Source: "Manage OAuth Access Tokens" (developers.tiktok.com/doc/
 * oauth-user-access-token-management, last updated 2026-11-05): access tokens 2 hours, refresh tokens
 * 180 days, and a refresh rotates the refresh token (the previous one stops working). Older pages said
 * 24 hours and 365 days; the current page wins.
 */
export const ACCESS_TTL_S = 2 * 3600;
export const REFRESH_TTL_S = 180 * 86400;

/**
 * Caption lengths are counted in UTF-16 code units ("UTF-16 runes"): video title 2,200 (Direct Post),
 * photo title 90 and description 4,000 (Photo). JavaScript's String.length is that count.
 */
export const VIDEO_TITLE_MAX_UTF16 = 2200;
export const PHOTO_TITLE_MAX_UTF16 = 90;
export const PHOTO_DESCRIPTION_MAX_UTF16 = 4000;

/**
 * "All content posted by unaudited clients will be restricted to private viewing mode" and "Unaudited API
 * Clients can only post contents in SELF_ONLY viewership" (Direct Post reference; Content Sharing
 * Guidelines, developers.tiktok.com/doc/content-sharing-guidelines). The code is the one TikTok lists for
 * it; its HTTP status (403) is not on the page we read.
 */
export const UNAUDITED_CODE = "unaudited_client_can_only_post_to_private_accounts";

/** TikTok's `{data, error:{code, message, log_id}}` envelope ("Error Handling", tiktok-api-v2-error-handling). */
export const envelope = (data: unknown, code = "ok", message = "", status = 200) =>
  Response.json({ data, error: { code, message, log_id: randomBytes(16).toString("hex").toUpperCase() } }, { status });

/** The scopes of the user fields asked for that the token lacks; unknown field names are invalid_params. */
export function missingFieldScopes(fields: string[], granted: string[]): { unknown: string[]; missing: string[] } {
  const unknown = fields.filter((f) => !(f in USER_FIELD_SCOPES));
  const missing = [
    ...new Set(fields.map((f) => USER_FIELD_SCOPES[f]).filter((s) => s && !granted.includes(s))),
  ] as string[];
  return { unknown, missing };
}

/**
 * What TikTok checks in the media it receives. Source: "Media Transfer Guide" (developers.tiktok.com/doc/
 * content-posting-api-media-transfer-guide, checked 2026-11-26). Video: MP4, WebM or MOV; H.264, H.265,
 * VP8 or VP9; 23 to 60 fps; 360 to 4096 pixels in both height and width; at most 10 minutes (the longest
 * a developer can send); at most 4 GB. Photos: WebP or JPEG, at most 20 MB each (the "maximum 1080p" the
 * guide gives photos is not checked: it does not say which side it bounds).
 */
export const VIDEO_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime", "video/webm"],
  codecs: ["avc1", "avc3", "hvc1", "hev1", "vp08", "vp09", "V_VP8", "V_VP9", "V_MPEG4/ISO/AVC", "V_MPEGH/ISO/HEVC"],
  minFrameRate: 23,
  maxFrameRate: 60,
  minWidth: 360,
  minHeight: 360,
  maxWidth: 4096,
  maxHeight: 4096,
  maxDuration: 600,
  maxBytes: 4096 * 1024 * 1024,
};
export const PHOTO_RULE: MediaRule = { types: ["image/jpeg", "image/webp"], maxBytes: 20 * 1024 * 1024 };

/**
 * The fail_reason "Get Post Status" gives for each check (developers.tiktok.com/doc/content-posting-api-
 * reference-get-video-status, checked 2026-11-26); anything else is a file format failure.
 */
export const VIDEO_FAIL_REASON: Partial<Record<keyof MediaRule, string>> = {
  minDuration: "duration_check_failed",
  maxDuration: "duration_check_failed",
  minFrameRate: "frame_rate_check_failed",
  maxFrameRate: "frame_rate_check_failed",
  minWidth: "picture_size_check_failed",
  minHeight: "picture_size_check_failed",
  maxWidth: "picture_size_check_failed",
  maxHeight: "picture_size_check_failed",
};

/** Uploads up to this size are kept whole until read; a larger one keeps its first chunk only (memory). */
export const KEEP_UPLOAD_BYTES = 256 * 1024 * 1024;
