-- Analytics (src/engine/analytics.ts): every published item whose numbers Crier reads, the latest numbers
-- on the row for fast answers and every reading kept as a snapshot for charts over time; per account its
-- audience and the state of its last read; per profile the last refresh asked for.
CREATE TABLE "analytics_items" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"account_id" uuid NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"platform" text NOT NULL,
	"platform_post_id" text NOT NULL,
	"target_id" uuid REFERENCES "post_targets"("id") ON DELETE set null,
	"post_id" uuid REFERENCES "posts"("id") ON DELETE set null,
	"url" text,
	"caption" text NOT NULL DEFAULT '',
	"media_type" text NOT NULL DEFAULT 'photo',
	"thumbnail_url" text,
	"media_url" text,
	"published_at" timestamp (3) with time zone NOT NULL,
	"views" bigint,
	"likes" bigint,
	"comments" bigint,
	"shares" bigint,
	"saves" bigint,
	"metrics_status" text DEFAULT 'ok' NOT NULL,
	"last_updated" timestamp (3) with time zone,
	"next_read_at" timestamp (3) with time zone NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"claimed_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "analytics_items_remote_idx" ON "analytics_items" USING btree ("account_id","platform_post_id");--> statement-breakpoint
CREATE UNIQUE INDEX "analytics_items_target_idx" ON "analytics_items" USING btree ("target_id");--> statement-breakpoint
CREATE INDEX "analytics_items_due_idx" ON "analytics_items" USING btree ("next_read_at");--> statement-breakpoint
CREATE INDEX "analytics_items_profile_idx" ON "analytics_items" USING btree ("profile_id","published_at");--> statement-breakpoint
CREATE TABLE "metric_snapshots" (
	"item_id" uuid NOT NULL REFERENCES "analytics_items"("id") ON DELETE cascade,
	"observed_at" timestamp (3) with time zone NOT NULL,
	"views" bigint,
	"likes" bigint,
	"comments" bigint,
	"shares" bigint,
	"saves" bigint,
	PRIMARY KEY ("item_id","observed_at")
);
--> statement-breakpoint
CREATE TABLE "account_analytics" (
	"account_id" uuid PRIMARY KEY NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"followers" bigint,
	"followers_observed_at" timestamp (3) with time zone,
	"metrics_status" text DEFAULT 'ok' NOT NULL,
	"next_stats_at" timestamp (3) with time zone NOT NULL,
	"next_native_at" timestamp (3) with time zone NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"claimed_by" text
);
--> statement-breakpoint
CREATE INDEX "account_analytics_profile_idx" ON "account_analytics" USING btree ("profile_id");--> statement-breakpoint
CREATE TABLE "follower_snapshots" (
	"account_id" uuid NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"observed_at" timestamp (3) with time zone NOT NULL,
	"followers" bigint NOT NULL,
	PRIMARY KEY ("account_id","observed_at")
);
--> statement-breakpoint
CREATE TABLE "analytics_refreshes" (
	"profile_id" uuid PRIMARY KEY NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"requested_at" timestamp (3) with time zone NOT NULL
);
