-- Webhooks (src/modules/webhooks, src/engine/webhooks.ts): endpoints, the durable outbox of events, one
-- delivery per event and endpoint, and every attempt made.
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE CASCADE,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"description" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"secrets" text NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp (3) with time zone,
	"failing_since" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "webhook_endpoints_profile_idx" ON "webhook_endpoints" ("profile_id", "updated_at", "id");--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE CASCADE,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigserial NOT NULL,
	"event_id" uuid NOT NULL REFERENCES "webhook_events"("id") ON DELETE CASCADE,
	"endpoint_id" uuid NOT NULL REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE,
	"profile_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"lease_until" timestamp (3) with time zone,
	"claimed_by" text,
	"last_status_code" integer,
	"delivered_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
-- The sender's claim reads pending deliveries in order of creation.
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" ("seq") WHERE "status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" ("endpoint_id", "seq");--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"delivery_id" uuid NOT NULL REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE,
	"attempted_at" timestamp (3) with time zone NOT NULL,
	"status_code" integer,
	"duration_ms" integer NOT NULL,
	"response_excerpt" text,
	"error" text
);--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" ("delivery_id", "attempted_at");--> statement-breakpoint
-- The last aggregate status a webhook was told about, per post: post.* events fire on a change of it.
CREATE TABLE "webhook_post_states" (
	"post_id" uuid PRIMARY KEY NOT NULL REFERENCES "posts"("id") ON DELETE CASCADE,
	"status" text NOT NULL
);--> statement-breakpoint
-- Times as the API writes them (Date.toISOString: UTC, milliseconds, Z).
CREATE OR REPLACE FUNCTION crier_iso(p timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(p AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
--> statement-breakpoint
-- postStatus() of src/domain/status.ts over an array of target statuses (tests check they agree).
CREATE OR REPLACE FUNCTION crier_post_status_of(p text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN count(*) FILTER (WHERE s <> 'cancelled') = 0 THEN 'cancelled'
    WHEN count(*) FILTER (WHERE s IN ('processing', 'submitted')) > 0 THEN 'processing'
    WHEN count(*) FILTER (WHERE s IN ('pending', 'scheduled')) = count(*) FILTER (WHERE s <> 'cancelled')
      THEN CASE WHEN count(*) FILTER (WHERE s = 'pending') > 0 THEN 'queued' ELSE 'scheduled' END
    WHEN count(*) FILTER (WHERE s IN ('pending', 'scheduled')) > 0 THEN 'processing'
    WHEN count(*) FILTER (WHERE s = 'published') = count(*) FILTER (WHERE s <> 'cancelled') THEN 'published'
    WHEN count(*) FILTER (WHERE s = 'published') = 0 THEN 'failed'
    ELSE 'partial' END
  FROM unnest(p) AS s
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_post_status(p_post uuid) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT crier_post_status_of(coalesce(array_agg(status), '{}')) FROM post_targets WHERE post_id = p_post
$$;
--> statement-breakpoint
-- PostTarget and Post exactly as toTarget()/toPost() of src/modules/posts/service.ts return them
-- (tests/modules/webhooks compares the two): a webhook carries the resource as the API showed it then.
CREATE OR REPLACE FUNCTION crier_target_json(t post_targets) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'target_post_id', t.id, 'account_id', t.account_id, 'platform', t.platform,
    'target_variant', t.target_variant,
    'username', (SELECT a.username FROM accounts a WHERE a.id = t.account_id),
    'status', t.status, 'error', t.error, 'error_code', t.error_code,
    'platform_post_id', t.platform_post_id, 'platform_post_url', t.platform_post_url,
    'scheduled_time', crier_iso(t.scheduled_time), 'published_at', crier_iso(t.published_at),
    'attempts', t.attempts, 'content_override', t.content_override,
    'platform_options', coalesce(t.platform_options, 'null'::jsonb))
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_post_json(p_post uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', p.id, 'content', p.content, 'external_id', p.external_id, 'media', p.media, 'origin', p.origin,
    'publish_at', crier_iso(p.publish_at), 'status', crier_post_status(p.id), 'draft_id', p.draft_id,
    'created_at', crier_iso(p.created_at), 'updated_at', crier_iso(p.updated_at),
    'targets', coalesce((SELECT jsonb_agg(crier_target_json(t) ORDER BY t.position, t.created_at, t.id)
      FROM post_targets t WHERE t.post_id = p.id), '[]'::jsonb))
  FROM posts p WHERE p.id = p_post
$$;
--> statement-breakpoint
-- Capabilities and media requirements come from the plugin registry: the sender fills them in.
CREATE OR REPLACE FUNCTION crier_account_json(a accounts) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', a.id, 'platform', a.platform, 'username', a.username,
    'avatar_url', a.avatar_url, 'status', a.status, 'capabilities', NULL, 'media_requirements', NULL,
    'created_at', crier_iso(a.created_at), 'updated_at', crier_iso(a.updated_at))
$$;
--> statement-breakpoint
-- A WorkflowItem as GET /v1/workflows/{id}/items shows it, with the one destination the event is about.
CREATE OR REPLACE FUNCTION crier_workflow_item_json(i workflow_items) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('workflow_id', i.workflow_id, 'item', jsonb_build_object(
    'id', s.id, 'source_item_id', s.source_item_id, 'source_url', s.source_url, 'kind', s.kind,
    'published_at', crier_iso(s.published_at), 'created_at', crier_iso(s.created_at),
    'updated_at', crier_iso(s.updated_at),
    'destinations', jsonb_build_array(jsonb_build_object(
      'account_id', i.account_id, 'platform', (SELECT a.platform FROM accounts a WHERE a.id = i.account_id),
      'status', i.status, 'slot_at', crier_iso(i.slot_at), 'reason_code', i.reason_code, 'reason', i.reason,
      'caption', i.caption, 'post_id', i.post_id))))
  FROM workflow_sources s WHERE s.id = i.source_id
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_webhooks_listening(p_profile uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.profile_id = p_profile AND e.is_active)
$$;
--> statement-breakpoint
-- The outbox write: one event row and one delivery per active endpoint subscribed to its type, in the
-- transaction of the change that caused it. Nothing is written when nobody listens.
CREATE OR REPLACE FUNCTION crier_webhook_emit(p_profile uuid, p_type text, p_data jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ev uuid;
BEGIN
  IF p_data IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.profile_id = p_profile
      AND e.is_active AND (p_type = ANY (e.events) OR '*' = ANY (e.events))) THEN
    RETURN;
  END IF;
  INSERT INTO webhook_events (profile_id, type, payload)
    VALUES (p_profile, p_type, jsonb_build_object('type', p_type, 'timestamp', crier_iso(now()), 'data', p_data))
    RETURNING id INTO ev;
  INSERT INTO webhook_deliveries (event_id, endpoint_id, profile_id, event_type, next_attempt_at)
    SELECT ev, e.id, p_profile, p_type, now() FROM webhook_endpoints e
    WHERE e.profile_id = p_profile AND e.is_active AND (p_type = ANY (e.events) OR '*' = ANY (e.events))
    ORDER BY e.created_at, e.id;
END $$;
--> statement-breakpoint
-- Aggregate post events: a change of the derived status since the last one told (queued has no event).
CREATE OR REPLACE FUNCTION crier_webhook_post_status(p_profile uuid, p_post uuid, p_before text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_status text := crier_post_status(p_post);
  told text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM posts WHERE id = p_post) THEN RETURN; END IF;
  SELECT status INTO told FROM webhook_post_states WHERE post_id = p_post FOR UPDATE;
  IF NOT FOUND THEN
    -- A post from before any endpoint listened: compare with what this change started from.
    INSERT INTO webhook_post_states (post_id, status) VALUES (p_post, now_status) ON CONFLICT (post_id) DO NOTHING;
    told := coalesce(p_before, now_status);
  ELSE
    UPDATE webhook_post_states SET status = now_status WHERE post_id = p_post AND status <> now_status;
  END IF;
  IF told <> now_status AND now_status <> 'queued' THEN
    PERFORM crier_webhook_emit(p_profile, 'post.' || now_status, crier_post_json(p_post));
  END IF;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_webhook_posts_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF crier_webhooks_listening(NEW.profile_id) AND EXISTS (SELECT 1 FROM posts WHERE id = NEW.id) THEN
    INSERT INTO webhook_post_states (post_id, status) VALUES (NEW.id, crier_post_status(NEW.id))
      ON CONFLICT (post_id) DO NOTHING;
    PERFORM crier_webhook_emit(NEW.profile_id, 'post.created', crier_post_json(NEW.id));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_webhook_targets_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur post_targets;
  before_status text;
BEGIN
  IF NOT crier_webhooks_listening(NEW.profile_id) THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM post_targets WHERE id = NEW.id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status AND cur.status = NEW.status
      AND NEW.status IN ('published', 'failed', 'submitted') THEN
    PERFORM crier_webhook_emit(NEW.profile_id, 'target.' || NEW.status,
      crier_target_json(cur) || jsonb_build_object('post_id', cur.post_id));
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status THEN
    SELECT crier_post_status_of(coalesce(array_agg(CASE WHEN t.id = NEW.id THEN OLD.status ELSE t.status END), '{}'))
      INTO before_status FROM post_targets t WHERE t.post_id = NEW.post_id;
  END IF;
  PERFORM crier_webhook_post_status(NEW.profile_id, NEW.post_id, before_status);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_webhook_accounts_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur accounts;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.status <> 'disconnected' THEN
      PERFORM crier_webhook_emit(OLD.profile_id, 'account.disconnected',
        crier_account_json(OLD) || jsonb_build_object('status', 'disconnected'));
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM accounts WHERE id = NEW.id;
  IF NOT FOUND OR cur.status <> NEW.status THEN RETURN NULL; END IF;
  PERFORM crier_webhook_emit(NEW.profile_id, CASE NEW.status WHEN 'active' THEN 'account.connected'
    ELSE 'account.' || NEW.status END, crier_account_json(cur));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION crier_webhook_workflow_items_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur workflow_items;
BEGIN
  IF NEW.status NOT IN ('queued', 'posted', 'skipped') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM workflow_items WHERE id = NEW.id;
  IF NOT FOUND OR cur.status <> NEW.status THEN RETURN NULL; END IF;
  PERFORM crier_webhook_emit(NEW.profile_id, 'workflow.item_' || NEW.status, crier_workflow_item_json(cur));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Deferred to the commit: the event describes what the transaction committed, and is written inside it.
CREATE CONSTRAINT TRIGGER "crier_webhook_posts" AFTER INSERT ON "posts"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION crier_webhook_posts_trigger();--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "crier_webhook_targets" AFTER INSERT OR UPDATE ON "post_targets"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION crier_webhook_targets_trigger();--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "crier_webhook_accounts" AFTER INSERT OR UPDATE OR DELETE ON "accounts"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION crier_webhook_accounts_trigger();--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "crier_webhook_workflow_items" AFTER INSERT OR UPDATE ON "workflow_items"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION crier_webhook_workflow_items_trigger();
