import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, type TokenResponse } from "../../src/platform/oauth.ts";
import { MB, mediaRequired } from "../../src/platform/limits.ts";

/** Instagram professional accounts through Instagram Login and the Graph API container flow. */
export default definePlugin({
  platform: "instagram",
  displayName: "Instagram",
  status: "declared_only",
  missing: ["publish (containers, carousel parent, status polling, media_publish)", "token refresh (ig_refresh_token)", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://graph.instagram.com",
  textLimit: { max: 2200, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: false, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 8 * MB, video: 300 * MB, gif: 0 },
    file_constraints: { maxFiles: 10, maxImageFiles: 10, maxVideoFiles: 10, maxGifFiles: 0, allowMixedMedia: true, gifBehavior: "not supported", maxMentions: 20, imageWidth: { min: 320, max: 1440 } },
    required_media: mediaRequired("Instagram", ["image", "video"], "at least one image or video"),
    max_hashtags: 30,
    min_video_duration_seconds: 3,
    max_video_duration_seconds: 900,
    aspect_ratio: { min: "4:5", max: "1.91:1", reels: "9:16" },
    thumbnail: { formats: ["image/jpeg", "image/png"], max_size_bytes: 8 * MB, applies_to: "Reels and Stories" },
  },
  optionsSchema: t.Object({
    ai_generated: t.Optional(t.Boolean({ description: "Requests Instagram's AI-generated label." })),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://www.instagram.com/oauth/authorize",
    tokenUrl: "https://api.instagram.com/oauth/access_token",
    clientAuth: "body",
    scopes: ["instagram_business_basic", "instagram_business_content_publish", "instagram_business_manage_comments", "instagram_business_manage_insights"],
    scopeSeparator: ",",
    async identity(c, token) {
      // The code gives a one-hour token; the long-lived one lasts 60 days and can be refreshed.
      const long = await connectCall<TokenResponse>(c, "Getting a long-lived token", "GET", "/access_token", {
        query: { grant_type: "ig_exchange_token", client_secret: c.settings.CLIENT_SECRET, access_token: token.access_token },
      });
      const me = await connectCall<{ user_id?: string; id: string; username: string; profile_picture_url?: string }>(c, "Reading the Instagram account", "GET", "/me", {
        query: { fields: "user_id,username,profile_picture_url", access_token: long.access_token },
      });
      return { remoteId: String(me.user_id ?? me.id), username: me.username, avatarUrl: me.profile_picture_url ?? null, credentials: tokenCredentials(long, c.now()) };
    },
  }),
});
