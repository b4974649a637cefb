import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, type TokenResponse } from "../../src/platform/oauth.ts";
import { GB, MB } from "../../src/platform/limits.ts";

/** Threads API: containers then threads_publish; a thread is a reply_to_id chain. */
export default definePlugin({
  platform: "threads",
  displayName: "Threads",
  status: "declared_only",
  missing: ["publish (containers, carousel, status polling, threads_publish, reply_to_id chains)", "token refresh (th_refresh_token)", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://graph.threads.net",
  // Threads counts emoji by their UTF-8 byte length inside the 500.
  textLimit: { max: 500, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: true, threads: true },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 8 * MB, video: 1 * GB, gif: 0 },
    file_constraints: { maxFiles: 20, maxImageFiles: 20, maxVideoFiles: 20, maxGifFiles: 0, allowMixedMedia: true, gifBehavior: "not supported", imageWidth: { min: 320, max: 1440 } },
    required_media: null,
    max_hashtags: 1,
    min_video_duration_seconds: null,
    max_video_duration_seconds: 300,
    aspect_ratio: { max: "10:1" },
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://threads.net/oauth/authorize",
    tokenUrl: "https://graph.threads.net/oauth/access_token",
    clientAuth: "body",
    scopes: ["threads_basic", "threads_content_publish", "threads_manage_replies", "threads_read_replies", "threads_manage_insights"],
    scopeSeparator: ",",
    async identity(c, token) {
      const long = await connectCall<TokenResponse>(c, "Getting a long-lived token", "GET", "/access_token", {
        query: { grant_type: "th_exchange_token", client_secret: c.settings.CLIENT_SECRET, access_token: token.access_token },
      });
      const me = await connectCall<{ id: string; username: string; threads_profile_picture_url?: string }>(c, "Reading the Threads account", "GET", "/v1.0/me", {
        query: { fields: "id,username,threads_profile_picture_url", access_token: long.access_token },
      });
      return { remoteId: me.id, username: me.username, avatarUrl: me.threads_profile_picture_url ?? null, credentials: tokenCredentials(long, c.now()) };
    },
  }),
});
