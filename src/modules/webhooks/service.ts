import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { and, asc, eq, inArray } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { secretKeys } from "../../config.ts";
import { decryptJson, encryptJson } from "../../db/crypto.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints, webhookEvents } from "../../db/schema.ts";
import { TEST_EVENT } from "../../domain/webhook-events.ts";
import { completePayload, deliverNow, type WebhookSecrets } from "../../engine/webhooks.ts";
import { BadRequest, NotFound } from "../../http/errors.ts";
import { isoOrNull } from "../../http/model.ts";
import { pageOrder, pageWhere, toPage } from "../../http/paging.ts";
import { webhookGuardOptions, webhookUrlProblem } from "../../platform/host/webhook-guard.ts";
import type { DeliveryListQuery, Webhook, WebhookCreate, WebhookDelivery, WebhookPatch } from "./model.ts";

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** After a rotation the old secret keeps signing this long, so receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** Recorded as claimed_by when a route sends a delivery itself. */
const SENDER = `api:${hostname()}:${process.pid}`;

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

function toWebhook(ctx: AppContext, row: EndpointRow): Webhook {
  const secrets = decryptJson<WebhookSecrets>(secretKeys(ctx.config), row.secrets);
  const overlap =
    secrets.previousUntil && Date.parse(secrets.previousUntil) > ctx.clock.now().getTime()
      ? secrets.previousUntil
      : null;
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    is_active: row.isActive,
    note:
      !row.isActive && row.disabledReason && row.disabledAt
        ? { type: "endpoint.disabled", reason: row.disabledReason, at: row.disabledAt.toISOString() }
        : null,
    previous_secret_expires_at: overlap,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function checkUrl(ctx: AppContext, url: string) {
  const problem = await webhookUrlProblem(url, webhookGuardOptions(ctx));
  if (problem)
    throw new BadRequest(
      "webhook_url_not_allowed",
      `url ${problem}.`,
      "Use a public https URL; a receiver on loopback or a private network needs WEBHOOK_ALLOW_PRIVATE=true on the server.",
    );
}

async function endpointRow(ctx: AppContext, profileId: string, id: string): Promise<EndpointRow> {
  const [row] = await ctx.db.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.profileId, profileId)));
  if (!row) throw new NotFound("Webhook");
  return row;
}

const bump = (ctx: AppContext, row: EndpointRow) =>
  new Date(Math.max(ctx.clock.now().getTime(), row.updatedAt.getTime() + 1));

export async function createWebhook(ctx: AppContext, profileId: string, body: WebhookCreate) {
  await checkUrl(ctx, body.url);
  const secret = newSecret();
  const now = ctx.clock.now();
  const [row] = await ctx.db.db
    .insert(webhookEndpoints)
    .values({
      profileId,
      url: body.url,
      events: body.events,
      description: body.description ?? null,
      isActive: body.is_active ?? true,
      secrets: encryptJson(ctx.config.secretKey, { current: secret } satisfies WebhookSecrets),
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return { ...toWebhook(ctx, row), secret };
}

export async function listWebhooks(
  ctx: AppContext,
  profileId: string,
  q: { limit?: number; after?: string; after_id?: string },
) {
  const rows = await ctx.db.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.profileId, profileId), pageWhere(webhookEndpoints, q)))
    .orderBy(...pageOrder(webhookEndpoints))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  return { data: page.items.map((r) => toWebhook(ctx, r)), meta: page.meta };
}

export async function getWebhook(ctx: AppContext, profileId: string, id: string) {
  return toWebhook(ctx, await endpointRow(ctx, profileId, id));
}

export async function updateWebhook(ctx: AppContext, profileId: string, id: string, patch: WebhookPatch) {
  const row = await endpointRow(ctx, profileId, id);
  if (patch.url !== undefined) await checkUrl(ctx, patch.url);
  const reactivated = patch.is_active === true && !row.isActive;
  const [updated] = await ctx.db.db
    .update(webhookEndpoints)
    .set({
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.events !== undefined && { events: patch.events }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.is_active !== undefined && { isActive: patch.is_active }),
      // Turning an endpoint on again clears Crier's note and its failure clock.
      ...(reactivated && { disabledReason: null, disabledAt: null, failingSince: null }),
      updatedAt: bump(ctx, row),
    })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  if (reactivated) ctx.dispatch?.wake();
  return toWebhook(ctx, updated);
}

export async function deleteWebhook(ctx: AppContext, profileId: string, id: string) {
  await endpointRow(ctx, profileId, id);
  await ctx.db.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return {
    deleted: true,
    id,
    provider_revocation_required: null,
    provider_revocation_url: null,
    message: "The webhook and its delivery history are deleted; nothing more is sent to it.",
  };
}

export async function rotateSecret(ctx: AppContext, profileId: string, id: string) {
  const row = await endpointRow(ctx, profileId, id);
  const old = decryptJson<WebhookSecrets>(secretKeys(ctx.config), row.secrets);
  const secret = newSecret();
  const now = ctx.clock.now();
  const next: WebhookSecrets = {
    current: secret,
    previous: old.current,
    previousUntil: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
  };
  const [updated] = await ctx.db.db
    .update(webhookEndpoints)
    .set({ secrets: encryptJson(ctx.config.secretKey, next), updatedAt: bump(ctx, row) })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  return { ...toWebhook(ctx, updated), secret };
}

async function toDeliveries(ctx: AppContext, rows: DeliveryRow[]): Promise<WebhookDelivery[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const [events, attempts] = await Promise.all([
    ctx.db.db
      .select({ id: webhookEvents.id, payload: webhookEvents.payload })
      .from(webhookEvents)
      .where(
        inArray(
          webhookEvents.id,
          rows.map((r) => r.eventId),
        ),
      ),
    ctx.db.db
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, ids))
      .orderBy(asc(webhookAttempts.attemptedAt), asc(webhookAttempts.id)),
  ]);
  const payloads = new Map(events.map((e) => [e.id, e.payload]));
  return rows.map((r) => ({
    id: r.id,
    webhook_id: r.endpointId,
    event_id: r.eventId,
    event: r.eventType,
    payload: completePayload(ctx, payloads.get(r.eventId) ?? {}),
    status: r.status,
    attempts: attempts
      .filter((a) => a.deliveryId === r.id)
      .map((a) => ({
        attempted_at: a.attemptedAt.toISOString(),
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        response_excerpt: a.responseExcerpt,
        error: a.error,
      })),
    next_retry_at: r.status === "pending" ? isoOrNull(r.nextAttemptAt) : null,
    delivered_at: isoOrNull(r.deliveredAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }));
}

export async function listDeliveries(ctx: AppContext, profileId: string, id: string, q: DeliveryListQuery) {
  await endpointRow(ctx, profileId, id);
  const rows = await ctx.db.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, id),
        q.status ? eq(webhookDeliveries.status, q.status) : undefined,
        q.event ? eq(webhookDeliveries.eventType, q.event) : undefined,
        pageWhere(webhookDeliveries, q),
      ),
    )
    .orderBy(...pageOrder(webhookDeliveries))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  return { data: await toDeliveries(ctx, page.items), meta: page.meta };
}

async function deliveryOf(ctx: AppContext, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const [row] = await ctx.db.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpointId)));
  if (!row) throw new NotFound("Delivery");
  return (await toDeliveries(ctx, [row]))[0];
}

const sendNow = (ctx: AppContext, deliveryId: string) =>
  deliverNow(ctx, deliveryId, { claimedBy: SENDER, leaseMs: ctx.config.publishLeaseSeconds * 1000 });

/** A webhook.test event to this endpoint only, sent before answering; the answer is its delivery. */
export async function testWebhook(ctx: AppContext, profileId: string, id: string) {
  const row = await endpointRow(ctx, profileId, id);
  const now = ctx.clock.now();
  const deliveryId = await ctx.db.db.transaction(async (tx) => {
    const [event] = await tx
      .insert(webhookEvents)
      .values({
        profileId,
        type: TEST_EVENT,
        payload: {
          type: TEST_EVENT,
          timestamp: now.toISOString(),
          data: {
            webhook_id: row.id,
            message: "A test event from Crier: this endpoint receives and verifies webhooks.",
          },
        },
        createdAt: now,
      })
      .returning({ id: webhookEvents.id });
    const [delivery] = await tx
      .insert(webhookDeliveries)
      .values({
        eventId: event.id,
        endpointId: row.id,
        profileId,
        eventType: TEST_EVENT,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: webhookDeliveries.id });
    return delivery.id;
  });
  await sendNow(ctx, deliveryId);
  return deliveryOf(ctx, row.id, deliveryId);
}

/** The same event (same webhook-id) sent again now, whatever became of it before. */
export async function redeliver(ctx: AppContext, profileId: string, id: string, deliveryId: string) {
  await endpointRow(ctx, profileId, id);
  await deliveryOf(ctx, id, deliveryId);
  await sendNow(ctx, deliveryId);
  return deliveryOf(ctx, id, deliveryId);
}
