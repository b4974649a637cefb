import { t } from "elysia";
import { definePlugin } from "../../src/platform/sdk.ts";
import { GB, MB } from "../../src/platform/limits.ts";

/** Nostr kind-1 notes signed by the user's NIP-46 remote signer, sent to relays; media via Blossom URLs. */
export default definePlugin({
  platform: "nostr",
  displayName: "Nostr",
  status: "declared_only",
  missing: ["connect (NIP-46 bunker:// or nostrconnect:// handshake over relays)", "publish (sign_event via the signer, EVENT to relays, Blossom uploads, imeta tags)", "fetchRecent", "metrics", "emulator"],
  connectionMode: "remote_signer",
  // The relays are the API; this default is used for the NIP-46 handshake and publishing.
  defaultApiUrl: "wss://relay.damus.io",
  // No protocol limit: relays advertise max_content_length (NIP-11); 64 KB is what common relays accept.
  textLimit: { max: 64000, unit: "bytes" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: true, threads: true },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/webm", "video/quicktime"],
    convertible_formats: {},
    // Blossom servers set their own caps; these are Crier's defaults.
    max_size_bytes: { image: 20 * MB, video: 1 * GB, gif: 15 * MB },
    file_constraints: { maxFiles: 10, maxImageFiles: 10, maxVideoFiles: 10, maxGifFiles: 10, allowMixedMedia: true, delivery: "URLs with NIP-92 imeta tags" },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  disconnect: {
    disableRecord: true,
    providerRevocationRequired: false,
    message: "Account disconnected and its record disabled. Crier asks the remote signer to log out on a best-effort basis; revoke Crier in your signer app as well if you want to be sure.",
  },
});
