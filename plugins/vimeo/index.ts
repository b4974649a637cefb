import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, mediaRequired } from "../../src/platform/limits.ts";

/** Vimeo API 3.4: one video per post, uploaded with tus; the content becomes the description. */
export default definePlugin({
  platform: "vimeo",
  displayName: "Vimeo",
  status: "declared_only",
  missing: ["publish (POST /me/videos with tus or pull upload, transcode polling)", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: "https://api.vimeo.com",
  textLimit: { max: 5000, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: false, images: false, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["video/mp4", "video/quicktime", "video/webm"],
    convertible_formats: {},
    // The account's plan quota is the real limit; 10 GB is Crier's advisory ceiling.
    max_size_bytes: { image: 0, video: 10 * GB, gif: 0 },
    file_constraints: { maxFiles: 1, maxImageFiles: 0, maxVideoFiles: 1, maxGifFiles: 0, allowMixedMedia: false, sizeLimit: "set by the Vimeo plan quota" },
    required_media: mediaRequired("Vimeo", ["video"], "exactly one video"),
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({
    title: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "Defaults to the first line of the content." })),
    privacy_view: t.Optional(t.UnionEnum(["anybody", "unlisted", "nobody", "disable"], { default: "anybody" })),
  }, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: "https://api.vimeo.com/oauth/authorize",
    tokenUrl: "https://api.vimeo.com/oauth/access_token",
    clientAuth: "basic",
    scopes: ["public", "private", "upload", "edit", "interact", "stats"],
    async identity(c, token) {
      // Vimeo's token answer already carries the user.
      const user = token.user as { uri?: string; name?: string; link?: string; pictures?: { base_link?: string } } | undefined;
      const id = user?.uri?.split("/").pop();
      if (!id) throw new Error("Vimeo answered the code exchange without a user");
      return { remoteId: id, username: user?.name ?? id, avatarUrl: user?.pictures?.base_link ?? null, credentials: tokenCredentials(token, c.now()) };
    },
  }),
});
