import { t, type Static } from "elysia";
import { PageQuery, Uuid } from "../../http/model.ts";
import { WorkflowSettings } from "../../domain/workflow-settings.ts";

const Name = t.String({ minLength: 1, maxLength: 200 });
const Description = t.Union([t.String({ maxLength: 2000 }), t.Null()]);
const TargetIds = t.Array(Uuid, {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: "Destination accounts of this profile: active, able to publish, not the source.",
});

export const WorkflowCreate = t.Object(
  {
    name: Name,
    description: t.Optional(Description),
    source_account_id: t.String({
      format: "uuid",
      description: "An account of this profile on a platform that can be a source (capabilities.source).",
    }),
    target_account_ids: TargetIds,
    is_active: t.Boolean({
      description: "Turning it on sets last_enabled_at: only content published after it is copied.",
    }),
    future_content_enabled: t.Optional(t.Boolean({ default: true })),
    settings: t.Optional(WorkflowSettings),
  },
  { additionalProperties: false, title: "WorkflowCreate" },
);

export const WorkflowPatch = t.Object(
  {
    name: t.Optional(Name),
    description: t.Optional(Description),
    source_account_id: t.Optional(t.String({ format: "uuid" })),
    target_account_ids: t.Optional(TargetIds),
    is_active: t.Optional(t.Boolean()),
    future_content_enabled: t.Optional(t.Boolean()),
    settings: t.Optional(WorkflowSettings),
  },
  { additionalProperties: false, title: "WorkflowPatch" },
);

const DateOrNull = t.Union([t.String({ format: "date-time" }), t.Null()]);

export const Workflow = t.Object(
  {
    id: t.String(),
    profile_id: t.String(),
    name: t.String(),
    description: t.Union([t.String(), t.Null()]),
    source_account_id: t.String(),
    target_account_ids: t.Array(t.String()),
    settings: WorkflowSettings,
    is_active: t.Boolean(),
    future_content_enabled: t.Boolean(),
    last_checked: DateOrNull,
    last_enabled_at: DateOrNull,
    last_error: t.Union([t.String(), t.Null()], {
      description: "Why the last poll of the source failed; null after a successful one.",
    }),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Workflow" },
);

export const WorkflowItemStatus = t.Union([
  t.Literal("queued"),
  t.Literal("skipped"),
  t.Literal("posted"),
  t.Literal("failed"),
]);

export const WorkflowDestination = t.Object(
  {
    account_id: t.String(),
    platform: t.Union([t.String(), t.Null()]),
    status: WorkflowItemStatus,
    slot_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "queued: when it becomes a post." }),
    reason_code: t.Union([t.String(), t.Null()], {
      description:
        "skipped: the filter or rule (filter_type, filter_hashtag_include, filter_hashtag_exclude, workflow_output, media_not_downloadable when the source gives a page or a still instead of its media file, or the destination's content code such as media_required or media_type_not_supported); failed: the post's error code.",
    }),
    reason: t.Union([t.String(), t.Null()]),
    caption: t.Union([t.String(), t.Null()], { description: "The caption built for this destination." }),
    post_id: t.Union([t.String(), t.Null()], { description: "posted: the post created (origin workflow)." }),
  },
  { title: "WorkflowDestination" },
);

export const WorkflowItem = t.Object(
  {
    id: t.String(),
    source_item_id: t.String(),
    source_url: t.Union([t.String(), t.Null()]),
    kind: t.String(),
    published_at: t.String({ format: "date-time", description: "When the source post was published." }),
    created_at: t.String({ format: "date-time", description: "When the workflow took it." }),
    updated_at: t.String({ format: "date-time" }),
    destinations: t.Array(WorkflowDestination),
  },
  { title: "WorkflowItem" },
);

export const WorkflowCheck = t.Object(
  {
    checked_at: t.String({ format: "date-time" }),
    found: t.Integer({ description: "Source posts read that are newer than last_enabled_at." }),
    items: t.Array(WorkflowItem, { description: "Source posts taken by this check (new ones only)." }),
  },
  { title: "WorkflowCheck" },
);

export const WorkflowListQuery = t.Object({ ...PageQuery });

export type WorkflowCreate = Static<typeof WorkflowCreate>;
export type WorkflowPatch = Static<typeof WorkflowPatch>;
export type Workflow = Static<typeof Workflow>;
export type WorkflowItem = Static<typeof WorkflowItem>;
export type WorkflowListQuery = Static<typeof WorkflowListQuery>;
