import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { MB, mediaRequired } from "../../src/platform/limits.ts";

const PLACEMENTS = ["spotlight", "public_story"] as const;

/** Snapchat Public Profile API: one target fans out into a Spotlight and/or a public Story. */
export default definePlugin({
  platform: "snapchat",
  displayName: "Snapchat",
  status: "declared_only",
  missing: ["publish (encrypted chunked media upload, /spotlights and /stories)", "token refresh", "metrics", "emulator"],
  defaultApiUrl: "https://businessapi.snapchat.com",
  // The Spotlight description; hashtags count inside it.
  textLimit: { max: 160, unit: "characters" },
  capabilities: { destination: true, source: false, backfill: false, text: false, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "video/mp4"],
    convertible_formats: {},
    max_size_bytes: { image: 20 * MB, video: 500 * MB, gif: 0 },
    file_constraints: { maxFiles: 1, maxImageFiles: 1, maxVideoFiles: 1, maxGifFiles: 0, allowMixedMedia: false, gifBehavior: "not supported", spotlight: "video only" },
    required_media: mediaRequired("Snapchat", ["image", "video"], "one image or one video"),
    max_hashtags: null,
    min_video_duration_seconds: 5,
    max_video_duration_seconds: 60,
    aspect_ratio: { recommended: "9:16", min_width: 540, min_height: 960 },
    thumbnail: null,
  },
  optionsSchema: t.Object({
    placements: t.Optional(t.Array(t.UnionEnum(PLACEMENTS), { minItems: 1, uniqueItems: true, default: ["spotlight"] })),
    locale: t.Optional(t.String({ pattern: "^[a-z]{2}_[A-Z]{2}$", default: "en_US" })),
  }, { additionalProperties: true }),
  variants: (options) => [...new Set((options as { placements?: string[] }).placements ?? ["spotlight"])],
  connect: oauthFlow({
    authorizeUrl: "https://accounts.snapchat.com/login/oauth2/authorize",
    tokenUrl: "https://accounts.snapchat.com/login/oauth2/access_token",
    clientAuth: "body",
    scopes: ["snapchat-profile-api"],
    async identity(c, token) {
      const me = await connectCall<{ public_profile?: { id: string; display_name?: string; snap_user_name?: string; logo_urls?: { original_logo_url?: string } } }>(
        c, "Reading the Snapchat public profile", "GET", "/v1/public_profiles/my_profile", { headers: { authorization: `Bearer ${token.access_token}` } },
      );
      const p = me.public_profile;
      if (!p?.id) throw new Error("Snapchat answered without a public profile id");
      return { remoteId: p.id, username: p.snap_user_name ?? p.display_name ?? p.id, avatarUrl: p.logo_urls?.original_logo_url ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
