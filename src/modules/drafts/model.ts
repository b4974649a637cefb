import { t, type Static } from "elysia";
import { DRAFT_STATUSES, EDITABLE_DRAFT_STATUSES } from "../../domain/enums.ts";
import { Literals, Uuid } from "../../http/model.ts";

export const DraftStatus = Literals(DRAFT_STATUSES);
export const EditableDraftStatus = Literals(EDITABLE_DRAFT_STATUSES);

const nonNegInt = () => t.Integer({ minimum: 0 });

export const DraftMediaInput = t.Object(
  {
    type: t.Union([t.Literal("image"), t.Literal("video")]),
    url: t.String(),
    file_name: t.Optional(t.String()),
    mime_type: t.Optional(t.String()),
    width: t.Optional(nonNegInt()),
    height: t.Optional(nonNegInt()),
    size: t.Optional(nonNegInt()),
    duration: t.Optional(t.Number({ minimum: 0 })),
    thumbnail_url: t.Optional(t.Union([t.String(), t.Null()])),
  },
  { additionalProperties: false, title: "DraftMediaInput" },
);

const draftFields = {
  content: t.Optional(t.String()),
  candidate_angle: t.Optional(t.String()),
  media: t.Optional(t.Array(DraftMediaInput)),
  selected_account_ids: t.Optional(t.Array(Uuid, { uniqueItems: true })),
  suggested_platforms: t.Optional(t.Array(t.String())),
};

export const DraftCreate = t.Object(draftFields, { additionalProperties: false, title: "DraftCreate" });

export const DraftPatch = t.Object(
  {
    ...draftFields,
    status: t.Optional(EditableDraftStatus),
    expected_updated_at: t.String({
      format: "date-time",
      description:
        "The updated_at you last read; a different current value means someone else changed the draft (409 draft_conflict).",
    }),
  },
  { additionalProperties: false, title: "DraftPatch" },
);

export const Draft = t.Object(
  {
    id: t.String(),
    content: t.String(),
    candidate_angle: t.String(),
    media: t.Array(DraftMediaInput),
    selected_account_ids: t.Array(t.String()),
    suggested_platforms: t.Array(t.String()),
    source_type: t.String({
      description: "Where the draft came from: api (created through this API) or post (made from a post).",
    }),
    status: DraftStatus,
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Draft" },
);

export const DraftListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  after: t.Optional(t.String({ format: "date-time" })),
  after_id: t.Optional(Uuid),
  status: t.Optional(EditableDraftStatus),
});

export type DraftCreate = Static<typeof DraftCreate>;
export type DraftPatch = Static<typeof DraftPatch>;
export type Draft = Static<typeof Draft>;
