import { t, type Static } from "elysia";
import { Literals, PageQuery } from "../../http/model.ts";
import { SERIES_STATUSES } from "../../domain/enums.ts";
import { MediaInput } from "../../platform/media-item.ts";
import { PostTargetInput, RepeatInput } from "../posts/model.ts";

const SeriesStatus = Literals(SERIES_STATUSES, {
  description:
    "active: makes occurrences; ended: the rule gave its last occurrence (COUNT, UNTIL); cancelled: deleted with DELETE /v1/series/{id}.",
});

/** A target of the template, as PostTargetInput takes it (a response schema of its own: see PostTargetInput). */
const SeriesTemplateTarget = t.Object(
  {
    account_id: t.String(),
    content_override: t.Union([t.String(), t.Null()]),
    platform_options: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  },
  { title: "SeriesTemplateTarget" },
);

export const SeriesTemplate = t.Object(
  {
    content: t.String(),
    media: t.Array(MediaInput),
    targets: t.Array(SeriesTemplateTarget),
  },
  {
    title: "SeriesTemplate",
    description: "What every occurrence not yet made is made from: the text, media and targets of POST /v1/posts.",
  },
);

export const Series = t.Object(
  {
    id: t.String(),
    rule: RepeatInput.properties.rule,
    time_zone: RepeatInput.properties.time_zone,
    starts_at: t.String({
      format: "date-time",
      description:
        "The series' start (DTSTART): publish_at of the create. Every occurrence keeps its local time of day in time_zone; COUNT counts from here.",
    }),
    status: SeriesStatus,
    template: SeriesTemplate,
    occurrences_created: t.Integer({ description: "How many occurrence posts were made (deleted ones included)." }),
    next_occurrences: t.Array(t.String({ format: "date-time" }), {
      description:
        "The rule's next times after now, up to 5 (empty once the series is not active). The waiting occurrence is the first unless it was moved with PATCH /v1/posts/{id}.",
    }),
    post_ids: t.Array(t.String(), {
      description:
        "The occurrence posts still stored, first first; read them with GET /v1/posts/{id} or GET /v1/posts?series_id=.",
    }),
    last_error: t.Union([t.String(), t.Null()], {
      description:
        "Why the engine could not make the next occurrence (a target account deleted or disconnected); null once it could.",
    }),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  {
    title: "Series",
    description:
      "Extension: a recurring post, made by POST /v1/posts with repeat. Each occurrence is its own post (series_id), made one at a time: the next as soon as the previous has left scheduled.",
  },
);

export const SeriesPatch = t.Object(
  {
    content: t.Optional(t.String()),
    media: t.Optional(t.Array(MediaInput, { maxItems: 50 })),
    targets: t.Optional(t.Array(PostTargetInput, { minItems: 1, maxItems: 100 })),
    rule: t.Optional(RepeatInput.properties.rule),
    time_zone: t.Optional(RepeatInput.properties.time_zone),
    starts_at: t.Optional(
      t.String({
        format: "date-time",
        description:
          "A new start: occurrences take its local time of day in time_zone from now on, and COUNT counts from it.",
      }),
    ),
  },
  {
    additionalProperties: false,
    title: "SeriesPatch",
    description:
      "What is sent replaces what is stored: the template (content, media, targets) and the timing (rule, time_zone, starts_at). An empty body changes nothing.",
  },
);

export const SeriesListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(SeriesStatus),
});

export type Series = Static<typeof Series>;
export type SeriesPatch = Static<typeof SeriesPatch>;
export type SeriesListQuery = Static<typeof SeriesListQuery>;
