import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { MB } from "../../src/platform/limits.ts";


/** X (Twitter) API v2: OAuth 2 with PKCE, tweets with up to 4 images or one video/GIF, threads by reply chain. */
export default definePlugin({
  platform: "twitter",
  displayName: "X (Twitter)",
  status: "declared_only",
  missing: ["publish (media upload init/append/finalize, POST /2/tweets, reply chains)", "token refresh", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://api.x.com",
  textLimit: { max: 280, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: true, threads: true },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 5 * MB, video: 512 * MB, gif: 15 * MB },
    file_constraints: { maxFiles: 4, maxImageFiles: 4, maxVideoFiles: 1, maxGifFiles: 1, allowMixedMedia: false, gifBehavior: "one animated GIF per post, alone" },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: 0.5,
    max_video_duration_seconds: 140,
    aspect_ratio: { min: "1:3", max: "3:1" },
    thumbnail: null,
  },
  // X counts 280 weighted characters: each URL counts 23, CJK characters and emoji count 2.
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://x.com/i/oauth2/authorize",
    tokenUrl: "https://api.x.com/2/oauth2/token",
    scopes: ["tweet.read", "tweet.write", "users.read", "media.write", "offline.access"],
    pkce: true,
    clientAuth: "basic",
    async identity(c, token) {
      const me = await connectCall<{ data: { id: string; username: string; profile_image_url?: string } }>(c, "Reading the X account", "GET", "/2/users/me", {
        query: { "user.fields": "profile_image_url" },
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      return { remoteId: me.data.id, username: me.data.username, avatarUrl: me.data.profile_image_url ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
  disconnect: { providerRevocationRequired: false },
});
