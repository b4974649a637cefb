CREATE TABLE "profile_limits" (
	"profile_id" uuid PRIMARY KEY NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"workflows" integer,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"name" text NOT NULL,
	"description" text,
	"source_account_id" uuid NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"target_account_ids" jsonb NOT NULL,
	"settings" jsonb NOT NULL,
	"is_active" boolean NOT NULL,
	"future_content_enabled" boolean DEFAULT true NOT NULL,
	"last_checked" timestamp (3) with time zone,
	"last_enabled_at" timestamp (3) with time zone,
	"poll_due_at" timestamp (3) with time zone,
	"lease_until" timestamp (3) with time zone,
	"claimed_by" text,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "workflows_page_idx" ON "workflows" USING btree ("profile_id","updated_at","id");
--> statement-breakpoint
CREATE INDEX "workflows_poll_idx" ON "workflows" USING btree ("poll_due_at") WHERE is_active and future_content_enabled;
--> statement-breakpoint
CREATE TABLE "workflow_sources" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workflow_id" uuid NOT NULL REFERENCES "workflows"("id") ON DELETE cascade,
	"source_item_id" text NOT NULL,
	"source_url" text,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"published_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_sources_item_idx" ON "workflow_sources" USING btree ("workflow_id","source_item_id");
--> statement-breakpoint
CREATE INDEX "workflow_sources_page_idx" ON "workflow_sources" USING btree ("workflow_id","updated_at","id");
--> statement-breakpoint
CREATE TABLE "workflow_items" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"source_id" uuid NOT NULL REFERENCES "workflow_sources"("id") ON DELETE cascade,
	"workflow_id" uuid NOT NULL REFERENCES "workflows"("id") ON DELETE cascade,
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"account_id" uuid NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"status" text NOT NULL,
	"reason" text,
	"reason_code" text,
	"slot_at" timestamp (3) with time zone,
	"caption" text,
	"media" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"platform_options" jsonb,
	"post_id" uuid REFERENCES "posts"("id") ON DELETE set null,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_items_dest_idx" ON "workflow_items" USING btree ("source_id","account_id");
--> statement-breakpoint
CREATE INDEX "workflow_items_due_idx" ON "workflow_items" USING btree ("slot_at") WHERE status = 'queued';
--> statement-breakpoint
CREATE INDEX "workflow_items_slots_idx" ON "workflow_items" USING btree ("workflow_id","account_id","slot_at");
