import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { KB, MB } from "../../src/platform/limits.ts";

/** LinkedIn member posts through the Posts, Images and Videos APIs. */
export default definePlugin({
  platform: "linkedin",
  displayName: "LinkedIn",
  status: "declared_only",
  missing: ["publish (Images/Videos initializeUpload, upload, finalize, POST /rest/posts)", "fetchRecent (member posts need the restricted r_member_social)", "metrics", "emulator"],
  defaultApiUrl: "https://api.linkedin.com",
  textLimit: { max: 3000, unit: "characters" },
  // Reading member posts needs a restricted permission, so a member account is no workflow source.
  capabilities: { destination: true, source: false, backfill: false, text: true, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "video/mp4"],
    convertible_formats: {},
    // LinkedIn limits images by pixels (36,152,320), not bytes; Crier's default image cap applies.
    max_size_bytes: { image: 20 * MB, video: 500 * MB, gif: 20 * MB },
    file_constraints: { maxFiles: 20, maxImageFiles: 20, maxVideoFiles: 1, maxGifFiles: 1, allowMixedMedia: false, maxImagePixels: 36_152_320, minVideoBytes: 75 * KB },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: 3,
    max_video_duration_seconds: 30 * 60,
    aspect_ratio: { video: { min: "1:2.4", max: "2.4:1" } },
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://www.linkedin.com/oauth/v2/authorization",
    tokenUrl: "https://www.linkedin.com/oauth/v2/accessToken",
    clientAuth: "body",
    scopes: ["openid", "profile", "w_member_social"],
    async identity(c, token) {
      const me = await connectCall<{ sub: string; name?: string; given_name?: string; picture?: string }>(c, "Reading the LinkedIn member", "GET", "/v2/userinfo", {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      return {
        remoteId: me.sub,
        username: me.name ?? me.given_name ?? me.sub,
        avatarUrl: me.picture ?? null,
        credentials: tokenCredentials(token, c.now(), { author_urn: `urn:li:person:${me.sub}` }),
      };
    },
  }),
});
