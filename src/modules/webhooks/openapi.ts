import { t, type TSchema } from "elysia";
import { TEST_EVENT, WEBHOOK_EVENTS, type WebhookEvent } from "../../domain/webhook-events.ts";
import { Account } from "../accounts/model.ts";
import { Post, PostTarget } from "../posts/model.ts";
import { WorkflowItem } from "../workflows/model.ts";

/** A TypeBox schema as plain JSON Schema (its symbol-keyed bookkeeping left out). */
const plain = (schema: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

function dataOf(event: WebhookEvent | typeof TEST_EVENT): TSchema {
  if (event === TEST_EVENT) return t.Object({ webhook_id: t.String(), message: t.String() });
  if (event.startsWith("post.")) return Post;
  if (event.startsWith("target."))
    return t.Composite([
      PostTarget,
      t.Object({ post_id: t.String({ description: "The post the target belongs to." }) }),
    ]);
  if (event.startsWith("account.")) return Account;
  return t.Object({
    workflow_id: t.String(),
    item: t.Composite([WorkflowItem], {
      description: "The source item; destinations holds the one destination concerned.",
    }),
  });
}

const SUMMARY: Record<string, string> = {
  "post.created": "A post was created (data: the post as POST /v1/posts answered).",
  "target.failed": "A target failed; data.error and data.error_code say why.",
  [TEST_EVENT]: "Sent by POST /v1/webhooks/{id}/test only.",
};

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per event type, each the POST Crier sends, with the
 * Standard Webhooks headers and the payload `{ type, timestamp, data }`.
 */
export function describeWebhookEvents<T>(doc: T): T {
  const d = doc as { webhooks?: Record<string, unknown> };
  d.webhooks = {};
  for (const event of [...WEBHOOK_EVENTS, TEST_EVENT]) {
    const payload = t.Object({
      type: t.Literal(event),
      timestamp: t.String({ format: "date-time", description: "When the change was committed." }),
      data: dataOf(event),
    });
    d.webhooks[event] = {
      post: {
        summary: event,
        description:
          (SUMMARY[event] ??
            `Fires once when ${event.replace(".", " becomes ")} (post events: on a change of the post's status).`) +
          " Verify webhook-signature with the endpoint's secret (Standard Webhooks); de-duplicate on webhook-id.",
        parameters: ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => ({
          name,
          in: "header",
          required: true,
          schema: { type: "string" },
        })),
        requestBody: { required: true, content: { "application/json": { schema: plain(payload) } } },
        // The receiver is not called with an API key: the signature is what it checks.
        security: [],
        responses: {
          "2XX": { description: "Delivered." },
          "410": { description: "Gone: Crier disables the endpoint." },
          "429": { description: "Retried after Retry-After." },
          default: { description: "Retried with backoff for about 3 days." },
        },
      },
    };
  }
  return doc;
}
