/**
 * Snapchat Public Profile API: one image or video per post, published as a Spotlight (video only)
 * and/or a public Story; platform_options.placements fans one target out into those variants. Media go
 * up encrypted (AES-256-CBC with a fresh key and IV given to Snap), in chunks of at most 32 MB. Snap
 * returns no public URL for a Story or Spotlight. The media container, its encryption and the 32 MB
 * parts follow Snap's Public Profile API reference (developers.snap.com/api/marketing-api/
 * Public-Profile-API/ProfileAssetManagement, checked 2026-11-26); the Story and Spotlight bodies follow
 * the same reference's posting section as far as it could be read (see docs/platforms.md).
 */
import { createCipheriv, randomBytes } from "node:crypto";
import { t } from "elysia";
import {
  definePlugin,
  unreadableMedia,
  type Outcome,
  type PluginContext,
  type PublishJob,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import {
  connectCall,
  oauthFlow,
  tokenCredentials,
  bearerAuth,
  refreshTokenGrant,
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { MB, mediaRequired } from "../../src/platform/limits.ts";

const TOKEN_URL = "https://accounts.snapchat.com/login/oauth2/access_token";
const TOKEN_ENDPOINT: TokenEndpoint = { tokenUrl: TOKEN_URL, clientAuth: "body" };
const PLACEMENTS = ["spotlight", "public_story"] as const;
const DESCRIPTION_MAX = 160;
const CHUNK = 32 * MB;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v && "reason" in v;
interface Envelope {
  request_status?: string;
  request_id?: string;
  display_message?: string;
  error_code?: string;
}
interface Options {
  placements?: string[];
  locale?: string;
}

const profile = (ctx: PluginContext) => ctx.account.remoteId;

/** Snap's envelope: anything but SUCCESS is a failure; MEDIA_PROCESSING means try again shortly. */
function envelopeFailure(body: Envelope): Fail | null {
  if (body.request_status === "SUCCESS") return null;
  const reason = body.display_message ?? body.error_code ?? "Snap refused the request";
  if (body.error_code === "MEDIA_PROCESSING") return { kind: "retryable", reason, retryAfterMs: 30_000 };
  return { kind: "permanent", reason, code: body.error_code ?? "snap_error" };
}

async function uploadMedia(ctx: PluginContext, job: PublishJob): Promise<{ id: string; video: boolean } | Fail> {
  const item = job.media[0];
  let bytes: Uint8Array;
  let type: string;
  try {
    const body = await ctx.media.open(item);
    type = body.contentType.split(";")[0].trim();
    bytes = await body.bytes();
  } catch (e) {
    return unreadableMedia(e);
  }
  const video = type.startsWith("video/");
  if (video && type !== "video/mp4")
    return { kind: "permanent", reason: "Snapchat takes MP4 videos only.", code: "unsupported_media" };
  if (!video && type !== "image/jpeg" && type !== "image/png")
    return { kind: "permanent", reason: "Snapchat takes JPEG or PNG images.", code: "unsupported_media" };
  const key = randomBytes(32);
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  const encrypted = Buffer.concat([cipher.update(bytes), cipher.final()]);
  const created = await ctx.http.request<Envelope & { media_id?: string; add_path?: string; finalize_path?: string }>(
    "POST",
    `/v1/public_profiles/${profile(ctx)}/media`,
    {
      json: {
        type: video ? "VIDEO" : "IMAGE",
        name: `crier-${job.idempotencyToken}`,
        key: key.toString("base64"),
        iv: iv.toString("base64"),
      },
      headers: bearerAuth(ctx),
    },
  );
  if (!created.ok) return created.outcome;
  const fail = envelopeFailure(created.body);
  if (fail) return fail;
  const { media_id, add_path, finalize_path } = created.body;
  if (!media_id || !add_path || !finalize_path)
    return { kind: "retryable", reason: "Snap created no upload for the media" };
  for (let part = 1, offset = 0; offset < encrypted.length; part++, offset += CHUNK) {
    const form = new FormData();
    form.set("action", "ADD");
    form.set("part_number", String(part));
    form.set(
      "file",
      new File([encrypted.subarray(offset, offset + CHUNK)], `part-${part}`, { type: "application/octet-stream" }),
    );
    const res = await ctx.http.request<Envelope>("POST", add_path, { multipart: form, headers: bearerAuth(ctx) });
    if (!res.ok) return res.outcome;
    const f = envelopeFailure(res.body);
    if (f) return f;
  }
  const form = new FormData();
  form.set("action", "FINALIZE");
  const fin = await ctx.http.request<Envelope>("POST", finalize_path, { multipart: form, headers: bearerAuth(ctx) });
  if (!fin.ok) return fin.outcome;
  return envelopeFailure(fin.body) ?? { id: media_id, video };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const video = job.media[0].type === "video";
  const variant = job.variant ?? (video ? "spotlight" : "public_story");
  if (!PLACEMENTS.includes(variant as never))
    return { kind: "permanent", reason: `Unknown Snapchat placement ${variant}.`, code: "invalid_variant" };
  if (variant === "spotlight" && !video)
    return {
      kind: "permanent",
      reason: "Spotlight takes videos only; use the public_story placement for images.",
      code: "spotlight_video_only",
    };
  const media = await uploadMedia(ctx, job);
  if (isFail(media)) return media;
  const options = job.options as Options;
  const res =
    variant === "spotlight"
      ? await ctx.http.request<Envelope & { spotlight?: { id?: string } }>(
          "POST",
          `/v1/public_profiles/${profile(ctx)}/spotlights`,
          {
            json: {
              media_id: media.id,
              description: job.content,
              locale: options.locale ?? "en_US",
              skip_save_to_profile: false,
            },
            headers: bearerAuth(ctx),
            creates: true,
          },
        )
      : await ctx.http.request<Envelope & { story?: { id?: string } }>(
          "POST",
          `/v1/public_profiles/${profile(ctx)}/stories`,
          {
            json: { media_id: media.id },
            headers: bearerAuth(ctx),
            creates: true,
          },
        );
  if (!res.ok) return res.outcome;
  const fail = envelopeFailure(res.body);
  if (fail) return fail;
  const body = res.body as { spotlight?: { id?: string }; story?: { id?: string } };
  const id = body.spotlight?.id ?? body.story?.id ?? media.id;
  // Snap gives no public link to a Story or a Spotlight; the profile is where people find it.
  return { kind: "published", platformPostId: id, url: `https://www.snapchat.com/add/${ctx.account.username}` };
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "Snap", holder: "profile" });

export default definePlugin({
  platform: "snapchat",
  displayName: "Snapchat",
  defaultApiUrl: "https://businessapi.snapchat.com",
  // The Spotlight description; hashtags count inside it.
  textLimit: { max: DESCRIPTION_MAX, unit: "characters" },
  // No alt text: Snapchat's Public Profile API takes no alt text (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
  capabilities: {
    destination: true,
    source: false,
    backfill: false,
    text: false,
    images: true,
    video: true,
    replies: false,
    threads: false,
  },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "video/mp4"],
    convertible_formats: {
      // Public Profile API media: JPEG or PNG images, MP4 video (https://developers.snap.com/api/marketing-api/Public-Profile-API/ProfileAssetManagement, read 2026-11-26).
      "image/webp": "image/jpeg",
      "video/quicktime": "video/mp4",
      "video/webm": "video/mp4",
    },
    max_size_bytes: { image: 20 * MB, video: 500 * MB, gif: 0 },
    file_constraints: {
      maxFiles: 1,
      maxImageFiles: 1,
      maxVideoFiles: 1,
      maxGifFiles: 0,
      allowMixedMedia: false,
      gifBehavior: "not supported",
      spotlight: "video only",
      // Media at least 540x960 (developers.snap.com/api/marketing-api/Public-Profile-API/Media, checked 2026-11-26).
      minImageWidth: 540,
      minImageHeight: 960,
      minVideoWidth: 540,
      minVideoHeight: 960,
    },
    required_media: mediaRequired("Snapchat", ["image", "video"], "one image or one video"),
    max_hashtags: null,
    // Spotlight and Story video: 5 to 60 s, 9:16 recommended (developers.snap.com/api/marketing-api/Public-Profile-API/Media, checked 2026-11-26).
    min_video_duration_seconds: 5,
    max_video_duration_seconds: 60,
    aspect_ratio: { recommended: "9:16" },
    thumbnail: null,
  },
  optionsSchema: t.Object(
    {
      placements: t.Optional(
        t.Array(t.UnionEnum(PLACEMENTS), { minItems: 1, uniqueItems: true, default: ["spotlight"] }),
      ),
      locale: t.Optional(t.String({ pattern: "^[a-z]{2}_[A-Z]{2}$", default: "en_US" })),
    },
    { additionalProperties: true },
  ),
  variantNames: PLACEMENTS,
  variants: (options) => [...new Set((options as Options).placements ?? ["spotlight"])],
  // Snap's Public Profile API takes one scope for everything (developers.snap.com, checked 2026-11-26).
  requiredScopes: { publish: ["snapchat-profile-api"] },
  connect: oauthFlow({
    authorizeUrl: "https://accounts.snapchat.com/login/oauth2/authorize",
    ...TOKEN_ENDPOINT,
    scopes: ["snapchat-profile-api"],
    async identity(c, token) {
      const me = await connectCall<{
        public_profile?: {
          id: string;
          display_name?: string;
          snap_user_name?: string;
          logo_urls?: { original_logo_url?: string };
        };
      }>(c, "Reading the Snapchat public profile", "GET", "/v1/public_profiles/my_profile", {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      const p = me.public_profile;
      if (!p?.id) throw new Error("Snapchat answered without a public profile id");
      return {
        remoteId: p.id,
        username: p.snap_user_name ?? p.display_name ?? p.id,
        avatarUrl: p.logo_urls?.original_logo_url ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    const body = res.body as Envelope | null;
    if (res.status === 429)
      return { kind: "retryable", reason: body?.display_message ?? "Snap rate limit", retryAfterMs: 60_000 };
    if (body?.error_code === "MEDIA_PROCESSING")
      return { kind: "retryable", reason: body.display_message ?? "media still processing", retryAfterMs: 30_000 };
    return undefined;
  },
  publish,
  refresh,
});
