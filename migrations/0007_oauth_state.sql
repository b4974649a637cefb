-- Connect states already used (src/modules/connect/used-states.ts): a state's nonce is recorded when its
-- callback or hosted form is accepted, so the same state cannot connect twice on any copy. Rows are
-- removed once the state would have expired anyway.
CREATE TABLE "connect_states_used" (
	"nonce" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "connect_states_used_expires_idx" ON "connect_states_used" USING btree ("expires_at");
