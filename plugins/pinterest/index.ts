import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";

/** Pinterest API v5: image pins, 2–5 image carousels and video pins, on a board. */
export default definePlugin({
  platform: "pinterest",
  displayName: "Pinterest",
  status: "declared_only",
  missing: ["publish (POST /pins with image_url or carousel; video: /media upload, polling, cover)", "board choice", "token refresh", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://api.pinterest.com/v5",
  // The post content becomes the pin description; the title is platform_options.title (100).
  textLimit: { max: 800, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: false, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/bmp", "image/tiff", "image/webp", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 20 * MB, video: 2 * GB, gif: 20 * MB },
    file_constraints: { maxFiles: 5, maxImageFiles: 5, maxVideoFiles: 1, maxGifFiles: 1, allowMixedMedia: false, carousel: { minImages: 2, maxImages: 5 } },
    required_media: mediaRequired("Pinterest", ["image", "video"], "an image or a video"),
    max_hashtags: null,
    min_video_duration_seconds: 4,
    max_video_duration_seconds: 15 * 60,
    aspect_ratio: { min: "1:2", max: "1.91:1", recommended: "2:3" },
    // Video pins need a cover: media[].thumbnail_url.
    thumbnail: { required_for_video: true, formats: ["image/jpeg", "image/png"] },
  },
  optionsSchema: t.Object({
    title: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    board_id: t.Optional(t.String({ minLength: 1, description: "The board to pin to; the account's first board when absent." })),
    link: t.Optional(t.String({ maxLength: 2048 })),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://www.pinterest.com/oauth/",
    tokenUrl: "https://api.pinterest.com/v5/oauth/token",
    clientAuth: "basic",
    scopes: ["boards:read", "boards:write", "pins:read", "pins:write", "user_accounts:read"],
    scopeSeparator: ",",
    async identity(c, token) {
      const me = await connectCall<{ id?: string; username: string; profile_image?: string }>(c, "Reading the Pinterest account", "GET", "/user_account", {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      return { remoteId: me.id ?? me.username, username: me.username, avatarUrl: me.profile_image ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
