ALTER TABLE "post_targets" ADD COLUMN "reconcile_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "post_targets" ADD COLUMN "reconcile_since" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "post_targets" ADD COLUMN "reconcile_until" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "post_targets" ADD COLUMN "reconcile_retried" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
CREATE INDEX "post_targets_reconcile_idx" ON "post_targets" USING btree ("reconcile_at") WHERE reconcile_at is not null;
