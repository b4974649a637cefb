/**
 * Facts of Pinterest's own OpenAPI description (github.com/pinterest/api-description, v5/openapi.json,
 * info.version 5.23.0; checked 2026-11-26), written as TypeBox schemas for the emulator to hold requests
 * to: the body of POST /pins (components.schemas.PinCreate and the PinMediaSource* variants), the body of
 * POST /media (MediaUploadCreate) and the OAuth scopes each operation's `security` lists. Only the parts
 * of the description the adapter's requests touch are here; the description itself is not copied.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";

const digits = T.String({ pattern: "^\\d+$" });
const base64 = T.String({ pattern: "^[a-zA-Z0-9+/=]+$" });
const imageType = T.Union([T.Literal("image/jpeg"), T.Literal("image/png")]);
const nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

/** PinMediaSourceImageBase64, PinMediaSourceImageURL, PinMediaSourceVideoID, PinMediaSourceImagesBase64, PinMediaSourceImagesURL. */
export const PinMediaSource = T.Union([
  T.Object({
    source_type: T.Literal("image_base64"),
    content_type: imageType,
    data: base64,
    is_standard: T.Optional(T.Boolean()),
  }),
  T.Object({ source_type: T.Literal("image_url"), url: T.String(), is_standard: T.Optional(T.Boolean()) }),
  T.Object({
    source_type: T.Literal("video_id"),
    media_id: digits,
    cover_image_url: T.Optional(T.String()),
    cover_image_content_type: T.Optional(imageType),
    cover_image_data: T.Optional(T.String()),
    cover_image_key_frame_time: T.Optional(T.Integer({ minimum: 0 })),
    is_standard: T.Optional(T.Boolean()),
  }),
  T.Object({
    source_type: T.Literal("multiple_image_base64"),
    items: T.Array(
      T.Object({
        content_type: imageType,
        data: base64,
        title: T.Optional(T.String()),
        description: T.Optional(T.String()),
        link: T.Optional(T.String()),
      }),
      { minItems: 2, maxItems: 5 },
    ),
    index: T.Optional(T.Integer({ minimum: 0 })),
  }),
  T.Object({
    source_type: T.Literal("multiple_image_urls"),
    items: T.Array(
      T.Object({
        url: T.String(),
        title: T.Optional(T.String()),
        description: T.Optional(T.String()),
        link: T.Optional(T.String()),
      }),
      { minItems: 2, maxItems: 5 },
    ),
    index: T.Optional(T.Integer({ minimum: 0 })),
  }),
]);

/** PinCreate: the fields a create may carry, their patterns and lengths. */
export const PinCreate = T.Object({
  board_id: digits,
  board_section_id: T.Optional(nullable(digits)),
  title: T.Optional(nullable(T.String({ maxLength: 100 }))),
  description: T.Optional(nullable(T.String({ maxLength: 800 }))),
  link: T.Optional(nullable(T.String({ maxLength: 2048 }))),
  alt_text: T.Optional(nullable(T.String({ maxLength: 500 }))),
  dominant_color: T.Optional(nullable(T.String())),
  parent_pin_id: T.Optional(nullable(digits)),
  media_source: PinMediaSource,
});

/** MediaUploadCreate (MediaUploadType: video). */
export const MediaUploadCreate = T.Object({ media_type: T.Literal("video") });

/** The scopes each operation the adapter calls lists under `security` (pinterest_oauth2). */
export const SCOPES: Record<string, string[]> = {
  "GET /user_account": ["user_accounts:read"],
  "GET /boards": ["boards:read"],
  "POST /pins": ["boards:read", "boards:write", "pins:read", "pins:write"],
  "GET /pins": ["boards:read", "pins:read"],
  "GET /pins/{pin_id}": ["boards:read", "pins:read"],
  "POST /media": ["pins:read", "pins:write"],
  "GET /media/{media_id}": ["pins:read"],
};
