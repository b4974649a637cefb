import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";

/** TikTok Content Posting API: direct video or photo posts, or a draft in the creator's inbox. */
export default definePlugin({
  platform: "tiktok",
  displayName: "TikTok",
  status: "declared_only",
  missing: ["publish (creator_info, video init + chunked FILE_UPLOAD, photo posts, status polling)", "token refresh", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://open.tiktokapis.com",
  // Video captions: 2,200 UTF-16 code units (photo posts: title 90, description 4,000).
  textLimit: { max: 2200, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: false, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/webp", "video/mp4", "video/webm", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 20 * MB, video: 4 * GB, gif: 0 },
    file_constraints: { maxFiles: 35, maxImageFiles: 35, maxVideoFiles: 1, maxGifFiles: 0, allowMixedMedia: false, gifBehavior: "not supported", imageMaxResolution: "1080p" },
    required_media: mediaRequired("TikTok", ["image", "video"], "one video or 1 to 35 photos"),
    max_hashtags: null,
    min_video_duration_seconds: 3,
    max_video_duration_seconds: 600,
    aspect_ratio: { recommended: "9:16", min_side: 360, max_side: 4096 },
    thumbnail: { formats: ["image/jpeg", "image/png"], max_size_bytes: 8 * MB, applies_to: "direct videos (inserted as first frame)" },
  },
  optionsSchema: t.Object({
    publish_mode: t.Optional(t.Literal("draft", { description: "Upload to the creator's TikTok inbox to finish there." })),
    video_cover_timestamp_ms: t.Optional(t.Integer({ minimum: 0, description: "Direct videos only; wins over media[].thumbnail_url." })),
    ai_generated: t.Optional(t.Boolean()),
    privacy_level: t.Optional(t.UnionEnum(["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"])),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://www.tiktok.com/v2/auth/authorize/",
    tokenUrl: "https://open.tiktokapis.com/v2/oauth/token/",
    clientIdParam: "client_key",
    clientIdSetting: "CLIENT_KEY",
    requiredSettings: ["CLIENT_KEY", "CLIENT_SECRET"],
    clientAuth: "body",
    scopes: ["user.info.basic", "video.publish", "video.upload", "video.list"],
    scopeSeparator: ",",
    async identity(c, token) {
      const me = await connectCall<{ data: { user: { open_id: string; username?: string; display_name?: string; avatar_url?: string } } }>(
        c, "Reading the TikTok user", "GET", "/v2/user/info/", {
          query: { fields: "open_id,username,display_name,avatar_url" },
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      const u = me.data.user;
      return { remoteId: u.open_id, username: u.username ?? u.display_name ?? u.open_id, avatarUrl: u.avatar_url ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
