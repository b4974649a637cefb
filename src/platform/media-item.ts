/**
 * A post's media as the API takes it (MediaInput of the spec) and as a plugin receives it (MediaItem):
 * one declaration, so what a client may send and what a plugin may read cannot drift apart.
 */
import { t, type Static } from "elysia";

const nonNegInt = () => t.Integer({ minimum: 0 });
const MediaKind = t.Union([t.Literal("image"), t.Literal("video")]);

/** MediaInput of the spec. The url is checked by the posts service (trimmed, absolute http/https, else invalid_media). */
export const MediaInput = t.Object(
  {
    url: t.String({
      description: "Absolute http(s) URL, e.g. data.public_url of an upload; surrounding whitespace is trimmed.",
    }),
    type: t.Optional(t.Union(MediaKind.anyOf, { description: "Guessed from the URL's extension when absent." })),
    width: t.Optional(nonNegInt()),
    height: t.Optional(nonNegInt()),
    size: t.Optional(nonNegInt()),
    duration: t.Optional(t.Number({ minimum: 0 })),
    thumbnail_url: t.Optional(t.String()),
    alt_text: t.Optional(
      t.String({
        description:
          "Extension: the file's description for people who cannot see it. Sent where the platform takes one " +
          "(X media metadata, Bluesky alt, LinkedIn altText, Pinterest alt_text, Facebook photos, Threads, " +
          "Instagram images, the Nostr imeta alt); each account's media_requirements.alt_text says for which " +
          "kinds and up to what length, and a longer text is a 400 alt_text_too_long. Platforms without alt " +
          "text (capabilities.alt_text false) ignore it.",
      }),
    ),
  },
  { additionalProperties: false, title: "MediaInput" },
);
export type MediaInput = Static<typeof MediaInput>;

/**
 * What the engine hands a plugin: a MediaInput whose url is trimmed and whose type is known; mime_type
 * is there when a source knows it (a workflow copying a post whose platform reports it).
 */
export const MediaItem = t.Composite(
  [t.Omit(MediaInput, ["type"]), t.Object({ type: MediaKind, mime_type: t.Optional(t.String()) })],
  { title: "MediaItem" },
);
export type MediaItem = Static<typeof MediaItem>;
