import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, MB } from "../../src/platform/limits.ts";

// Reddit refuses API calls without a distinctive User-Agent.
const USER_AGENT = "server:crier:0.1 (self-hosted social publishing)";

/** Reddit: self and link posts, media via the asset upload, comment chains for threads. */
export default definePlugin({
  platform: "reddit",
  displayName: "Reddit",
  status: "declared_only",
  missing: ["publish (/api/submit self/link, media asset upload, galleries, json.errors mapping)", "token refresh", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://oauth.reddit.com",
  textLimit: { max: 40000, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: true, threads: true },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 20 * MB, video: 1 * GB, gif: 20 * MB },
    file_constraints: { maxFiles: 20, maxImageFiles: 20, maxVideoFiles: 1, maxGifFiles: 1, allowMixedMedia: false },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: 15 * 60,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({
    subreddit: t.String({ pattern: "^[A-Za-z0-9_]{2,21}$", description: "Subreddit name without r/." }),
    title: t.Optional(t.String({ minLength: 1, maxLength: 300, description: "Defaults to the first line of the content." })),
    postType: t.Optional(t.UnionEnum(["auto", "self", "link"], { default: "auto" })),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://www.reddit.com/api/v1/authorize",
    tokenUrl: "https://www.reddit.com/api/v1/access_token",
    clientAuth: "basic",
    scopes: ["identity", "submit", "read", "history", "flair"],
    extraAuthorizeParams: { duration: "permanent" },
    async identity(c, token) {
      const me = await connectCall<{ id: string; name: string; icon_img?: string }>(c, "Reading the Reddit user", "GET", "/api/v1/me", {
        headers: { authorization: `Bearer ${token.access_token}`, "user-agent": USER_AGENT },
      });
      return { remoteId: me.id, username: me.name, avatarUrl: me.icon_img?.split("?")[0] || null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
