-- A target's first comment (src/engine/first-comment.ts): posted by the same account right after the post
-- is published. first_comment_status is null for a target without one, then waiting (the post is not
-- published yet), pending (due at first_comment_due_at), processing (a copy holds
-- first_comment_lease_until), published, failed or unknown (the attempt may have created it; while
-- first_comment_due_at is set, the reconciler asks the platform then). since/until: when the last attempt
-- ran (where to look for the comment); retried: the one retry a proven absence allows was spent.
ALTER TABLE post_targets ADD COLUMN first_comment text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_status text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_id text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_url text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_error text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_error_code text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_attempts integer NOT NULL DEFAULT 0;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_due_at timestamptz;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_lease_until timestamptz;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_claimed_by text;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_since timestamptz;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_until timestamptz;
--> statement-breakpoint
ALTER TABLE post_targets ADD COLUMN first_comment_retried boolean NOT NULL DEFAULT false;
--> statement-breakpoint
-- What the engine looks for every tick (due comments, expired leases, unknowns to reconcile): a handful of
-- rows at most, so the index holds only those.
CREATE INDEX post_targets_first_comment_due_idx ON post_targets (first_comment_due_at)
  WHERE first_comment_status IN ('pending', 'processing', 'unknown');
