import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";

/** YouTube Data API v3: one resumable video upload per post; the content becomes the description. */
export default definePlugin({
  platform: "youtube",
  displayName: "YouTube",
  status: "declared_only",
  missing: ["publish (resumable upload, processing polling, thumbnails.set)", "token refresh", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://www.googleapis.com",
  // The description: 5,000 bytes.
  textLimit: { max: 5000, unit: "bytes" },
  capabilities: { destination: true, source: true, backfill: true, text: false, images: false, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["video/mp4", "video/quicktime", "video/webm"],
    convertible_formats: {},
    max_size_bytes: { image: 0, video: 256 * GB, gif: 0 },
    file_constraints: { maxFiles: 1, maxImageFiles: 0, maxVideoFiles: 1, maxGifFiles: 0, allowMixedMedia: false, shorts: "3 minutes or less, vertical or square" },
    required_media: mediaRequired("YouTube", ["video"], "exactly one video"),
    max_hashtags: 60,
    min_video_duration_seconds: null,
    max_video_duration_seconds: 12 * 3600,
    aspect_ratio: null,
    thumbnail: { formats: ["image/jpeg", "image/png"], max_size_bytes: 2 * MB },
  },
  optionsSchema: t.Object({
    title: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: "^[^<>]*$", description: "Defaults to the first line of the content." })),
    privacy_status: t.Optional(t.UnionEnum(["public", "unlisted", "private"], { default: "public" })),
    ai_generated: t.Optional(t.Boolean({ description: "Sets status.containsSyntheticMedia." })),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    clientAuth: "body",
    pkce: true,
    scopes: ["https://www.googleapis.com/auth/youtube.upload", "https://www.googleapis.com/auth/youtube.readonly", "https://www.googleapis.com/auth/yt-analytics.readonly"],
    extraAuthorizeParams: { access_type: "offline", prompt: "consent" },
    async identity(c, token) {
      const list = await connectCall<{ items?: { id: string; snippet?: { title?: string; customUrl?: string; thumbnails?: { default?: { url?: string } } } }[] }>(
        c, "Reading the YouTube channel", "GET", "/youtube/v3/channels", { query: { part: "snippet", mine: true }, headers: { authorization: `Bearer ${token.access_token}` } },
      );
      const ch = list.items?.[0];
      if (!ch) throw new Error("This Google account has no YouTube channel");
      return { remoteId: ch.id, username: ch.snippet?.customUrl ?? ch.snippet?.title ?? ch.id, avatarUrl: ch.snippet?.thumbnails?.default?.url ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
