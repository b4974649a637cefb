/**
 * What a webhook can be told about (src/modules/webhooks, written by the database triggers of
 * migrations/functions/crier_webhook_*.sql) and what became of a delivery: declared once for the models, the
 * schema and the OpenAPI description.
 */
export const WEBHOOK_EVENTS = [
  "post.created",
  "post.scheduled",
  "post.processing",
  "post.published",
  "post.partial",
  "post.failed",
  "post.cancelled",
  "target.published",
  "target.failed",
  "target.submitted",
  "account.connected",
  "account.auth_required",
  "account.disconnected",
  "workflow.item_queued",
  "workflow.item_posted",
  "workflow.item_skipped",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Sent only by POST /v1/webhooks/{id}/test, whatever the endpoint subscribed to. */
export const TEST_EVENT = "webhook.test" as const;

/** pending: due now or at next_retry_at; delivered: a 2xx came back; failed: given up (or the endpoint disabled). */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Seconds to wait after the n-th failed attempt (1-based), about three days in all; after the last the
 * delivery fails. Each wait gets ±20 % jitter so endpoints coming back are not hit by a wave.
 */
export const RETRY_SCHEDULE_SECONDS = [5, 60, 300, 1800, 7200, 28800, 86400, 86400, 86400] as const;

/** An endpoint whose deliveries have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 86400_000;
