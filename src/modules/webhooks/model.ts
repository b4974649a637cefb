import { t, type Static } from "elysia";
import { DELIVERY_STATUSES, TEST_EVENT, WEBHOOK_EVENTS } from "../../domain/webhook-events.ts";
import { Literals, PageQuery } from "../../http/model.ts";

export const WebhookEventType = Literals(WEBHOOK_EVENTS, { title: "WebhookEventType" });
const Subscription = t.Union([...WEBHOOK_EVENTS.map((e) => t.Literal(e)), t.Literal("*")]);

const fields = {
  url: t.String({
    minLength: 1,
    maxLength: 2048,
    description:
      "Where deliveries are POSTed: https (or http) to a public host; loopback and private hosts only with WEBHOOK_ALLOW_PRIVATE=true.",
  }),
  events: t.Array(Subscription, {
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length + 1,
    uniqueItems: true,
    description: "The event types to send, or `*` for all of them.",
  }),
  description: t.Union([t.String({ maxLength: 500 }), t.Null()]),
  is_active: t.Boolean({
    description:
      "false pauses deliveries; true again clears a disabled note. Deliveries already pending when the endpoint " +
      "is paused or disabled are kept, and go out in order of creation once it is active again (retries " +
      "resume their schedule); events that happen while it is inactive are not recorded for it.",
  }),
};

export const WebhookCreate = t.Object(
  {
    url: fields.url,
    events: fields.events,
    description: t.Optional(fields.description),
    is_active: t.Optional({ ...fields.is_active, default: true }),
  },
  { additionalProperties: false, title: "WebhookCreate" },
);

export const WebhookPatch = t.Partial(t.Object(fields, { additionalProperties: false }), {
  additionalProperties: false,
  title: "WebhookPatch",
});

export const WebhookNote = t.Object(
  {
    type: t.Literal("endpoint.disabled"),
    reason: t.String(),
    at: t.String({ format: "date-time" }),
  },
  { title: "WebhookNote" },
);

export const Webhook = t.Object(
  {
    id: t.String(),
    url: t.String(),
    events: t.Array(t.String()),
    description: t.Union([t.String(), t.Null()]),
    is_active: t.Boolean(),
    note: t.Union([WebhookNote, t.Null()], {
      description: "Why Crier disabled the endpoint (410 Gone, or every delivery failing for 3 days).",
    }),
    previous_secret_expires_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "After a rotation the old secret signs alongside the new one until then.",
    }),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Webhook" },
);

export const WebhookWithSecret = t.Composite(
  [
    Webhook,
    t.Object({
      secret: t.String({
        description:
          "The signing secret (whsec_…), shown only in this answer. Verify with any Standard Webhooks library.",
      }),
    }),
  ],
  { title: "WebhookWithSecret" },
);

export const WebhookAttempt = t.Object(
  {
    attempted_at: t.String({ format: "date-time" }),
    status_code: t.Union([t.Integer(), t.Null()], { description: "null when no answer came (timeout, refused)." }),
    duration_ms: t.Integer(),
    response_excerpt: t.Union([t.String(), t.Null()], { description: "The first 1 KiB of the answer." }),
    error: t.Union([t.String(), t.Null()]),
  },
  { title: "WebhookAttempt" },
);

export const WebhookDelivery = t.Object(
  {
    id: t.String(),
    webhook_id: t.String(),
    event_id: t.String({ description: "Sent as the webhook-id header: the same on every attempt and redelivery." }),
    event: t.String(),
    payload: t.Record(t.String(), t.Unknown()),
    status: Literals(DELIVERY_STATUSES),
    attempts: t.Array(WebhookAttempt),
    next_retry_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    delivered_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "WebhookDelivery" },
);

export const WebhookListQuery = t.Object({ ...PageQuery });
export const DeliveryListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(Literals(DELIVERY_STATUSES)),
  event: t.Optional(t.Union([WebhookEventType, t.Literal(TEST_EVENT)])),
});

export type WebhookCreate = Static<typeof WebhookCreate>;
export type WebhookPatch = Static<typeof WebhookPatch>;
export type Webhook = Static<typeof Webhook>;
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;
