import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { GB, MB } from "../../src/platform/limits.ts";

/** Farcaster casts through Neynar managed signers; media are URL embeds (the protocol has no upload). */
export default definePlugin({
  platform: "farcaster",
  displayName: "Farcaster",
  status: "declared_only",
  missing: ["connect (Neynar signer + EIP-712 signed key request with the app custody key, approval polling)", "publish (POST /v2/farcaster/cast with embeds, parent, channel_id, idem)", "fetchRecent", "metrics", "emulator"],
  connectionMode: "managed_signer",
  defaultApiUrl: "https://api.neynar.com",
  // LONG_CAST: up to 1,024 bytes (plain casts stop at 320).
  textLimit: { max: 1024, unit: "bytes" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: true, threads: true },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"],
    convertible_formats: {},
    // Media travel as URL embeds the clients fetch; Crier's own upload limits are the only byte caps.
    max_size_bytes: { image: 20 * MB, video: 1 * GB, gif: 15 * MB },
    file_constraints: { maxFiles: 2, maxImageFiles: 2, maxVideoFiles: 2, maxGifFiles: 2, allowMixedMedia: true, delivery: "URL embeds" },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({
    channel_id: t.Optional(t.String({ minLength: 1 })),
    reply_to: t.Optional(t.Union([
      t.Object({
        hash: t.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "The full cast hash." }),
        author_fid: t.Integer({ minimum: 1 }),
      }),
      t.Null(),
    ])),
  }, { additionalProperties: true }),
  disconnect: {
    disableRecord: true,
    providerRevocationRequired: true,
    providerRevocationUrl: "https://farcaster.xyz/~/settings/connected-apps",
    message: "Account disconnected and its record disabled. The Farcaster signer stays valid until you revoke it in the Farcaster app (Settings, Connected apps).",
  },
});
