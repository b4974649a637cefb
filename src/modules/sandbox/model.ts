import { t, type Static } from "elysia";
import { PageQuery, Uuid } from "../../http/model.ts";

export const DeliveryMedia = t.Object(
  {
    type: t.String({ description: "What the platform received: image, video, photo, animation, document…" }),
    content_type: t.Union([t.String(), t.Null()]),
    size: t.Union([t.Integer({ minimum: 0 }), t.Null()]),
    url: t.Union([t.String(), t.Null()], { description: "The post's media URL at this position, for a thumbnail." }),
    alt_text: t.Union([t.String(), t.Null()], {
      description: "The alt text the platform stored with the file; null where it has none or takes none.",
    }),
    preview_url: t.Union([t.String(), t.Null()], {
      description:
        "A picture of the item: the image itself; for a video its thumbnail_url, else the poster frame Crier made of its own video (needs ffmpeg); null when there is none.",
    }),
  },
  { title: "SandboxDeliveryMedia" },
);

export const Delivery = t.Object(
  {
    id: t.String({ format: "uuid", description: "The post target that was delivered." }),
    post_id: Uuid,
    account_id: Uuid,
    platform: t.String(),
    username: t.String({ description: "The sandbox account's username on the emulated platform." }),
    platform_post_id: t.String(),
    text: t.String({ description: "The text as the emulator received it." }),
    media: t.Array(DeliveryMedia),
    reply_to: t.Union([t.String({ format: "uuid" }), t.Null()], {
      description: "The delivery this one answers in a thread (its target id), or null.",
    }),
    reply_to_platform_post_id: t.Union([t.String(), t.Null()]),
    options: t.Record(t.String(), t.Unknown(), {
      description: "Options the platform received, such as Telegram's disable_notification.",
    }),
    received_at: t.String({ format: "date-time" }),
  },
  {
    title: "SandboxDelivery",
    description: "One post as a sandbox emulator received it, for integrators' tests.",
  },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryListQuery = t.Object({
  ...PageQuery,
  account_id: t.Optional(Uuid),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;
