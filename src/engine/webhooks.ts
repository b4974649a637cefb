/**
 * Webhook delivery: the outbox (webhook_deliveries, written by the webhook triggers, migrations/functions/crier_webhook_*.sql,
 * in the transaction of each change) is read by any copy. A copy claims due deliveries with
 * FOR UPDATE SKIP LOCKED and a lease, sends each endpoint's share in order of creation, one at a time,
 * and records every attempt. A copy that dies mid-send leaves its lease to expire; another copy sends
 * again with the same webhook-id (at least once; receivers de-duplicate on it).
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import type { Db } from "../db/client.ts";
import { secretKeys } from "../config.ts";
import { decryptJson } from "../db/crypto.ts";
import { DISABLE_AFTER_FAILING_MS, RETRY_SCHEDULE_SECONDS } from "../domain/webhook-events.ts";
import { errorFields, type Logger } from "../log.ts";
import {
  checkWebhookUrl,
  webhookGuardOptions,
  webhookRequest,
  type WebhookCheck,
} from "../platform/host/webhook-guard.ts";
import { parseRetryAfter } from "../platform/retry-after.ts";
import { WebhookSigner } from "./webhook-signature.ts";

/** The signing secrets of an endpoint, as stored (encrypted) in webhook_endpoints.secrets. */
export interface WebhookSecrets {
  current: string;
  /** The secret before the last rotation: it signs alongside `current` until previousUntil. */
  previous?: string;
  previousUntil?: string;
}

export interface SenderOptions {
  claimedBy: string;
  leaseMs: number;
  /** Deliveries claimed at once. */
  batch?: number;
  /** Endpoints sent to at once. */
  concurrency?: number;
  timeoutMs?: number;
  random?: () => number;
}

/** Answers are kept up to this many characters: enough to see what the receiver said. */
export const RESPONSE_EXCERPT_CHARS = 1024;
const DEFAULTS = { batch: 500, concurrency: 16, timeoutMs: 10_000 };

interface Claimed {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  /** The event as stored, as JSON text: sent as it is, never parsed and written again (account events aside). */
  payload: string;
  seq: string | number;
  url: string;
  secrets: string;
  is_active: boolean;
  failing_since: Date | string | null;
}

interface AttemptResult {
  id: string;
  endpointId: string;
  status: "pending" | "delivered" | "failed";
  statusCode: number | null;
  durationMs: number;
  excerpt: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
  at: Date;
  /** Disable the endpoint with this reason (410 Gone, 3 days of failures). */
  disable?: string;
}

const iso = (d: Date) => d.toISOString();

/** The body sent: the stored JSON text, completed for account events (see completePayload). */
function bodyOf(ctx: AppContext, c: Claimed): string {
  return c.event_type.startsWith("account.")
    ? JSON.stringify(completePayload(ctx, JSON.parse(c.payload) as Record<string, unknown>))
    : c.payload;
}

/** Account payloads carry what the plugin registry declares (not stored in the database). */
export function completePayload(ctx: AppContext, payload: Record<string, unknown>): Record<string, unknown> {
  const type = String(payload.type ?? "");
  const data = payload.data as Record<string, unknown> | undefined;
  if (!type.startsWith("account.") || !data) return payload;
  const described = ctx.platforms.describe(String(data.platform));
  return {
    ...payload,
    data: {
      ...data,
      capabilities: described?.capabilities ?? null,
      media_requirements: described?.media_requirements ?? null,
    },
  };
}

const claimColumns = sql`d.id, d.endpoint_id, d.event_id, d.event_type, d.attempts, d.seq, e.payload::text as payload,
  w.url, w.secrets, w.is_active, w.failing_since`;

/**
 * Due deliveries, oldest first, leased to this copy. First attempts are due at once whatever their time.
 * The leased rows are found through the primary key (`= any(array(...))`): joined to the CTE instead, the
 * planner hashed the whole table on every claim, which grew with every delivery ever made.
 */
export async function claimDue(db: Db, claimedBy: string, now: Date, leaseMs: number, limit: number) {
  const rows = await db.rows<Claimed>(sql`
    with due as (
      select id from webhook_deliveries
      where status = 'pending' and (attempts = 0 or next_attempt_at <= ${iso(now)}::timestamptz)
        and (lease_until is null or lease_until < ${iso(now)}::timestamptz)
        and exists (select 1 from webhook_endpoints w where w.id = endpoint_id and w.is_active)
      order by seq limit ${limit} for update of webhook_deliveries skip locked)
    update webhook_deliveries d set lease_until = ${iso(new Date(now.getTime() + leaseMs))}::timestamptz,
      claimed_by = ${claimedBy}
    from webhook_events e, webhook_endpoints w
    where d.id = any(array(select id from due)) and e.id = d.event_id and w.id = d.endpoint_id
    returning ${claimColumns}`);
  // UPDATE … RETURNING keeps no order: the order of creation is restored here.
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/** One delivery leased to `claimedBy` now, whatever its status (the test and redeliver routes). */
export async function claimOne(db: Db, id: string, claimedBy: string, now: Date, leaseMs: number) {
  const rows = await db.rows<Claimed>(sql`
    update webhook_deliveries d set lease_until = ${iso(new Date(now.getTime() + leaseMs))}::timestamptz,
      claimed_by = ${claimedBy}, status = 'pending'
    from webhook_events e, webhook_endpoints w
    where d.id = ${id} and e.id = d.event_id and w.id = d.endpoint_id
    returning ${claimColumns}`);
  return rows[0];
}

function signingSecrets(ctx: AppContext, stored: string, now: Date): string[] {
  const s = decryptJson<WebhookSecrets>(secretKeys(ctx.config), stored);
  const old = s.previous && s.previousUntil && Date.parse(s.previousUntil) > now.getTime() ? [s.previous] : [];
  return [s.current, ...old];
}

function retryDelayMs(attempt: number, random: () => number): number | null {
  const base = RETRY_SCHEDULE_SECONDS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

async function readExcerpt(res: Response): Promise<string> {
  if (!res.body) return "";
  // A short answer that says its length is read whole: a stream reader per delivery costs more than the send.
  const length = Number(res.headers.get("content-length") ?? Number.NaN);
  if (length <= RESPONSE_EXCERPT_CHARS) return (await res.text()).slice(0, RESPONSE_EXCERPT_CHARS);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < RESPONSE_EXCERPT_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    // The rest of a large answer is never read.
    await reader.cancel().catch(() => {});
  }
  return text.slice(0, RESPONSE_EXCERPT_CHARS);
}

/** What an endpoint's share of a batch needs once: its signers and the address check of its URL. */
interface Prepared {
  signers: WebhookSigner[];
  /** The checked URL and the address its requests connect to, or why it may not be sent to. */
  check: WebhookCheck;
}

/** An endpoint whose signers or check failed in Crier (a secret that no longer decrypts): each delivery fails. */
const unprepared = (e: unknown): Prepared => ({
  signers: [],
  check: { ok: false, problem: `could not be prepared for sending: ${(e as Error)?.message ?? String(e)}` },
});

async function prepare(ctx: AppContext, c: Claimed): Promise<Prepared> {
  return {
    signers: signingSecrets(ctx, c.secrets, ctx.clock.now()).map((s) => new WebhookSigner(s)),
    check: await checkWebhookUrl(c.url, webhookGuardOptions(ctx)),
  };
}

/** A failed attempt: the next try by the schedule (or Retry-After), or the end; the 3-day rule disables. */
function failedAttempt(
  c: Claimed,
  at: Date,
  started: number,
  o: Required<SenderOptions>,
  failure: { error: string | null; statusCode: number | null; excerpt: string | null; afterMs?: number },
): AttemptResult {
  const wait = failure.afterMs ?? retryDelayMs(c.attempts + 1, o.random);
  const failingSince = c.failing_since ? new Date(c.failing_since) : at;
  const disable =
    at.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS
      ? "Every delivery failed for 3 days; the endpoint was disabled. Fix the receiver, then PATCH is_active to true."
      : undefined;
  return {
    id: c.id,
    endpointId: c.endpoint_id,
    at,
    durationMs: Math.round(performance.now() - started),
    statusCode: failure.statusCode,
    excerpt: failure.excerpt,
    error: failure.error,
    status: wait === null || disable ? "failed" : "pending",
    nextAttemptAt: wait === null || disable ? null : new Date(at.getTime() + wait),
    disable,
  };
}

/** Sends one delivery and says what came of it (nothing is written here). */
async function attempt(ctx: AppContext, c: Claimed, p: Prepared, o: Required<SenderOptions>): Promise<AttemptResult> {
  const at = ctx.clock.now();
  const started = performance.now();
  const base = { id: c.id, endpointId: c.endpoint_id, at, statusCode: null, excerpt: null };
  const retry = (error: string | null, statusCode: number | null, excerpt: string | null, afterMs?: number) =>
    failedAttempt(c, at, started, o, { error, statusCode, excerpt, afterMs });
  if (!p.check.ok) return retry(`the URL ${p.check.problem}`, null, null);
  // To the address the guard checked, not to the name again: a rebinding name cannot steer it inside.
  const pinned = webhookRequest(p.check.target, ctx.webhookGuard?.ca);
  const body = bodyOf(ctx, c);
  // Signed with the wall clock, not ctx.clock: receivers check webhook-timestamp against theirs.
  const sentAt = new Date();
  const signature = p.signers.map((w) => w.sign(c.event_id, sentAt, body)).join(" ");
  let res: Response;
  try {
    res = await fetch(pinned.input, {
      method: "POST",
      headers: {
        ...pinned.headers,
        "content-type": "application/json",
        "user-agent": "Crier-Webhooks",
        "webhook-id": c.event_id,
        "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body,
      // A redirect could lead past the address guard: it counts as a failed delivery.
      redirect: "manual",
      signal: AbortSignal.timeout(o.timeoutMs),
      tls: pinned.tls,
    });
  } catch (e) {
    const err = e as Error;
    return retry(err.name === "TimeoutError" ? `no answer within ${o.timeoutMs} ms` : err.message, null, null);
  }
  const excerpt = await readExcerpt(res).catch(() => null);
  const durationMs = Math.round(performance.now() - started);
  if (res.status >= 200 && res.status < 300)
    return {
      ...base,
      statusCode: res.status,
      excerpt,
      durationMs,
      error: null,
      status: "delivered",
      nextAttemptAt: null,
    };
  if (res.status === 410) {
    return {
      ...base,
      statusCode: 410,
      excerpt,
      durationMs,
      error: "410 Gone",
      status: "failed",
      nextAttemptAt: null,
      disable: "The receiver answered 410 Gone; the endpoint was disabled. PATCH is_active to true to resume.",
    };
  }
  const retryAfter = res.status === 429 ? parseRetryAfter(res.headers.get("retry-after"), at) : undefined;
  return retry(`HTTP ${res.status}`, res.status, excerpt, retryAfter);
}

/**
 * Every result in one statement: the attempt rows, the deliveries (fenced on our claim) and the endpoints'
 * failure clocks and disabled notes. The deliveries are found through the primary key (`= any(array(...))`);
 * without it the planner scanned the table once per result.
 */
async function record(db: Db, claimedBy: string, results: AttemptResult[]): Promise<void> {
  if (!results.length) return;
  const rows = JSON.stringify(
    results.map((r) => ({
      id: r.id,
      endpoint_id: r.endpointId,
      status: r.status,
      code: r.statusCode,
      duration: r.durationMs,
      excerpt: r.excerpt,
      error: r.error,
      next_at: r.nextAttemptAt ? iso(r.nextAttemptAt) : null,
      at: iso(r.at),
      disable: r.disable ?? null,
    })),
  );
  await db.rows(sql`
    with v as (
      select * from jsonb_to_recordset(${rows}::text::jsonb) as v(id uuid, endpoint_id uuid, status text, code integer,
        duration integer, excerpt text, error text, next_at timestamptz, at timestamptz, disable text)),
    upd as (
      update webhook_deliveries d set status = v.status, attempts = d.attempts + 1, next_attempt_at = v.next_at,
        lease_until = null, claimed_by = null, last_status_code = v.code,
        delivered_at = case when v.status = 'delivered' then v.at end, updated_at = v.at
      from v where d.id = any(array(select id from v)) and d.id = v.id and d.claimed_by = ${claimedBy}
      returning d.id),
    att as (
      insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, response_excerpt, error)
      select v.id, v.at, v.code, v.duration, v.excerpt, v.error from v join upd on upd.id = v.id
      returning delivery_id),
    ends as (
      select endpoint_id, bool_or(status = 'delivered') as ok, max(at) as at, min(at) as first_at,
        max(disable) as disable
      from v group by endpoint_id)
    update webhook_endpoints w set
      failing_since = case when ends.ok then null else coalesce(w.failing_since, ends.first_at) end,
      is_active = case when ends.disable is not null then false else w.is_active end,
      disabled_reason = coalesce(ends.disable, w.disabled_reason),
      disabled_at = case when ends.disable is not null then ends.at else w.disabled_at end,
      updated_at = case when ends.disable is not null then ends.at else w.updated_at end
    from ends where w.id = ends.endpoint_id
      and (ends.disable is not null or (ends.ok and w.failing_since is not null) or (not ends.ok and w.failing_since is null))
    returning w.id`);
}

interface Sent {
  results: AttemptResult[];
  /** Claimed but not sent: their endpoint was disabled on the way. They go back unleased, attempts untouched. */
  unsent: string[];
}

/**
 * Sends what was claimed: endpoints side by side, each endpoint's deliveries one after the other. Nothing
 * is written; `disabled` collects endpoints disabled on the way (shared across the batches of one send loop,
 * so a batch claimed before the 410 came back does not send to the endpoint either).
 */
async function send(
  ctx: AppContext,
  claimed: Claimed[],
  o: Required<SenderOptions>,
  disabled: Set<string>,
): Promise<Sent> {
  const byEndpoint = new Map<string, Claimed[]>();
  for (const c of claimed) {
    const q = byEndpoint.get(c.endpoint_id);
    if (q) q.push(c);
    else byEndpoint.set(c.endpoint_id, [c]);
  }
  const queues = [...byEndpoint.values()];
  const results: AttemptResult[] = [];
  const unsent: string[] = [];
  const worker = async () => {
    for (let q = queues.shift(); q; q = queues.shift()) {
      // The URL is resolved and checked once per batch of the endpoint: each batch is a fresh check.
      const prepared = disabled.has(q[0].endpoint_id) ? undefined : await prepare(ctx, q[0]).catch(unprepared);
      // One request at a time per endpoint: receivers see an endpoint's events in order of creation.
      for (const c of q) {
        // After a 410 (or the 3-day rule) the rest waits, unsent, until the endpoint is active again.
        if (!prepared || disabled.has(c.endpoint_id)) unsent.push(c.id);
        else {
          // A fault of one delivery is that delivery's failed attempt: it never costs the batch its record.
          const r = await attempt(ctx, c, prepared, o).catch((e: unknown) =>
            failedAttempt(c, ctx.clock.now(), performance.now(), o, {
              error: `sending failed in Crier: ${(e as Error)?.message ?? String(e)}`,
              statusCode: null,
              excerpt: null,
            }),
          );
          results.push(r);
          if (r.disable) disabled.add(c.endpoint_id);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, queues.length) }, worker));
  return { results, unsent };
}

/** Writes what a send came to: results recorded, unsent deliveries unleased. */
async function settle(db: Db, claimedBy: string, { results, unsent }: Sent): Promise<void> {
  await record(db, claimedBy, results);
  if (unsent.length)
    await db.rows(sql`
      update webhook_deliveries set lease_until = null, claimed_by = null
      where claimed_by = ${claimedBy} and id in (${sql.join(
        unsent.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})
      returning id`);
}

/**
 * The options with their defaults, also for keys present but undefined: the scheduler passes its own
 * `random` through, undefined under `crier serve`, and a spread would have put undefined over Math.random
 * (the first failed delivery then threw, and its whole batch went unrecorded).
 */
const withDefaults = (opts: SenderOptions): Required<SenderOptions> => ({
  claimedBy: opts.claimedBy,
  leaseMs: opts.leaseMs,
  batch: opts.batch ?? DEFAULTS.batch,
  concurrency: opts.concurrency ?? DEFAULTS.concurrency,
  timeoutMs: opts.timeoutMs ?? DEFAULTS.timeoutMs,
  random: opts.random ?? Math.random,
});

/** Sends what was claimed and records it before returning. */
export async function sendClaimed(ctx: AppContext, claimed: Claimed[], opts: SenderOptions): Promise<AttemptResult[]> {
  const o = withDefaults(opts);
  const sent = await send(ctx, claimed, o, new Set());
  await settle(ctx.db, o.claimedBy, sent);
  return sent.results;
}

/** The delivery sent now, in this process (POST /v1/webhooks/{id}/test). */
export async function deliverNow(ctx: AppContext, deliveryId: string, opts: SenderOptions): Promise<void> {
  const c = await claimOne(ctx.db, deliveryId, opts.claimedBy, ctx.clock.now(), opts.leaseMs);
  if (c) await sendClaimed(ctx, [c], opts);
}

/**
 * The engine's part: a loop that claims and sends until nothing is due, started by each tick, by
 * startPolling's short timer (so an event goes out well within a second) and by tests through drain().
 */
export class WebhookSender {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly o: SenderOptions,
    private readonly log: Logger,
  ) {}

  /** Starts a send loop unless one runs (then it looks again when done). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Looks for due deliveries this often between ticks. */
  startPolling(everyMs = 200): void {
    this.timer ??= setInterval(() => this.kick(), everyMs);
  }

  /** Sends until nothing is due now (tests, runUntilIdle). */
  async drain(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async loop(): Promise<void> {
    const o = withDefaults(this.o);
    const claim = () => claimDue(this.ctx.db, o.claimedBy, this.ctx.clock.now(), o.leaseMs, o.batch);
    const disabled = new Set<string>();
    let writing: Promise<void> = Promise.resolve();
    try {
      let claimed = await claim();
      while (claimed.length && !this.stopped) {
        // Three stages overlap: the next batch is claimed and the last one's results are written while
        // this one is sent. What is on the wire or unwritten stays leased to us, so no claim takes it
        // again; batches still go out one after the other, in order, and at most one write is pending.
        const next = claimed.length < o.batch ? Promise.resolve([]) : claim();
        const sent = await send(this.ctx, claimed, o, disabled);
        await writing;
        writing = settle(this.ctx.db, o.claimedBy, sent);
        // Marked handled until awaited: a failed write must reach the catch below, not crash the process.
        writing.catch(() => {});
        claimed = await next;
      }
      await writing;
    } catch (e) {
      await writing.catch(() => {});
      this.log.error("webhook delivery failed", errorFields(e));
    }
  }
}
