import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, errors, Paged, Uuid } from "../../http/model.ts";
import { DeleteResult } from "../accounts/model.ts";
import {
  DeliveryListQuery,
  Webhook,
  WebhookCreate,
  WebhookDelivery,
  WebhookListQuery,
  WebhookPatch,
  WebhookWithSecret,
} from "./model.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });
const DeliveryParams = t.Object({ id: Uuid, deliveryId: Uuid });

export function webhooksRoutes(ctx: AppContext) {
  return new Elysia({ name: "webhooks", prefix: "/v1/webhooks", detail: { tags: ["Webhooks"] } })
    .use(auth(ctx))
    .post(
      "",
      async ({ principal, body, set }) => {
        set.status = 201;
        return { data: await service.createWebhook(ctx, principal.profileId, body) };
      },
      {
        scope: "webhooks:write",
        body: WebhookCreate,
        response: { 201: Data(WebhookWithSecret), ...errors(400) },
        detail: {
          summary: "Create a webhook",
          description:
            "Events are POSTed to url in the Standard Webhooks format (headers webhook-id, webhook-timestamp, webhook-signature), signed with the secret " +
            "returned here once (whsec_…). The URL's host must resolve to public addresses (400 webhook_url_not_allowed otherwise, unless the server sets " +
            "WEBHOOK_ALLOW_PRIVATE=true); it is checked again before every delivery. Payloads of every event are described under `webhooks` in this document.",
        },
      },
    )
    .get("", ({ principal, query }) => service.listWebhooks(ctx, principal.profileId, query), {
      scope: "webhooks:read",
      query: WebhookListQuery,
      response: { 200: Paged(Webhook), ...errors(400) },
      detail: { summary: "List webhooks", description: "Newest first by updated_at." },
    })
    .get(
      "/:id",
      async ({ principal, params }) => ({ data: await service.getWebhook(ctx, principal.profileId, params.id) }),
      {
        scope: "webhooks:read",
        params: IdParams,
        response: { 200: Data(Webhook), ...errors(400, 404) },
        detail: { summary: "Read a webhook" },
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({
        data: await service.updateWebhook(ctx, principal.profileId, params.id, body),
      }),
      {
        scope: "webhooks:write",
        params: IdParams,
        body: WebhookPatch,
        response: { 200: Data(Webhook), ...errors(400, 404) },
        detail: {
          summary: "Update a webhook",
          description:
            "is_active true on a disabled endpoint clears its note and resumes the deliveries that waited for it.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.deleteWebhook(ctx, principal.profileId, params.id) }),
      {
        scope: "webhooks:write",
        params: IdParams,
        response: { 200: Data(DeleteResult), ...errors(400, 404) },
        detail: { summary: "Delete a webhook" },
      },
    )
    .post(
      "/:id/rotate-secret",
      async ({ principal, params }) => ({ data: await service.rotateSecret(ctx, principal.profileId, params.id) }),
      {
        scope: "webhooks:write",
        params: IdParams,
        response: { 200: Data(WebhookWithSecret), ...errors(400, 404) },
        detail: {
          summary: "Rotate the signing secret",
          description:
            "Answers with the new secret (shown once). For 24 hours every delivery carries two signatures in webhook-signature, one with each secret.",
        },
      },
    )
    .post(
      "/:id/test",
      async ({ principal, params }) => ({ data: await service.testWebhook(ctx, principal.profileId, params.id) }),
      {
        scope: "webhooks:write",
        params: IdParams,
        response: { 200: Data(WebhookDelivery), ...errors(400, 404) },
        detail: {
          summary: "Send a test event",
          description:
            "Sends a webhook.test event to this endpoint now (even when inactive) and answers with its delivery and the attempt made.",
        },
      },
    )
    .get(
      "/:id/deliveries",
      ({ principal, params, query }) => service.listDeliveries(ctx, principal.profileId, params.id, query),
      {
        scope: "webhooks:read",
        params: IdParams,
        query: DeliveryListQuery,
        response: { 200: Paged(WebhookDelivery), ...errors(400, 404) },
        detail: {
          summary: "List deliveries",
          description: "Newest first by updated_at; filter by status and event. Each has its attempts.",
        },
      },
    )
    .post(
      "/:id/deliveries/:deliveryId/redeliver",
      async ({ principal, params }) => ({
        data: await service.redeliver(ctx, principal.profileId, params.id, params.deliveryId),
      }),
      {
        scope: "webhooks:write",
        params: DeliveryParams,
        response: { 200: Data(WebhookDelivery), ...errors(400, 404) },
        detail: {
          summary: "Send a delivery again",
          description: "Sends the same event (same webhook-id) now and answers with the delivery.",
        },
      },
    );
}
