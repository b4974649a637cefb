/**
 * Facts of Vimeo's own OpenAPI description (github.com/vimeo/openapi, api.yaml, API 3.4; checked
 * 2026-11-26), written as TypeBox schemas for the emulator to hold requests to: the body of
 * POST /me/videos (upload_video_alt1: `upload` required, `upload.approach` one of post/pull/streaming/tus,
 * `upload.size` a string of bytes, `privacy.view` one of seven values) and the query of GET /me/videos
 * (get_videos_alt1: `sort` and `direction` enums). Only what the adapter's requests touch is here.
 */
import { Type as T } from "@sinclair/typebox";

const oneOf = (...values: string[]) => T.Union(values.map((v) => T.Literal(v)));

export const UploadVideo = T.Object({
  upload: T.Object({
    approach: oneOf("post", "pull", "streaming", "tus"),
    size: T.Optional(T.String({ pattern: "^\\d+$" })),
    link: T.Optional(T.String()),
    redirect_url: T.Optional(T.String()),
  }),
  name: T.Optional(T.String()),
  description: T.Optional(T.String()),
  privacy: T.Optional(
    T.Object({
      view: T.Optional(oneOf("anybody", "contacts", "disable", "nobody", "password", "unlisted", "users")),
      comments: T.Optional(oneOf("anybody", "contacts", "nobody")),
      embed: T.Optional(oneOf("private", "public", "whitelist")),
      add: T.Optional(T.Boolean()),
      download: T.Optional(T.Boolean()),
    }),
  ),
});

export const ListVideosQuery = T.Object({
  sort: T.Optional(
    oneOf(
      "alphabetical",
      "comments",
      "date",
      "default",
      "duration",
      "last_user_action_event_date",
      "likes",
      "modified_time",
      "plays",
    ),
  ),
  direction: T.Optional(oneOf("asc", "desc")),
  per_page: T.Optional(T.String({ pattern: "^\\d+$" })),
  page: T.Optional(T.String({ pattern: "^\\d+$" })),
});
