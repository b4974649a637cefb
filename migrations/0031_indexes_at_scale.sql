-- Housekeeping looks at due targets every tick of every copy for the few it must settle without
-- publishing: thread replies whose earlier item can no longer be published, and targets whose account was
-- deleted. It read every waiting due target to find them: with a backlog of 20,000 due targets that was
-- 11 ms a tick per copy, the costliest statement after the claim with four copies (bench/scale), and more
-- with the 100,000 of a burst. Only replies (position > 0) can have an earlier item, and only targets
-- without an account can have lost it: each look now reads an index that holds only those.
CREATE INDEX post_targets_waiting_reply_idx ON post_targets (due_at) WHERE status IN ('pending', 'scheduled') AND position > 0;
--> statement-breakpoint
CREATE INDEX post_targets_waiting_orphan_idx ON post_targets (due_at) WHERE status IN ('pending', 'scheduled') AND account_id IS NULL;
--> statement-breakpoint
-- Deleting a post sets the analytics items that point at it to null: without this index each deleted post
-- read the whole analytics_items table (a delete of 28,000 bench posts ran past the statement timeout with
-- 28,000 items). Their targets' reference has its unique index already.
CREATE INDEX analytics_items_post_idx ON analytics_items (post_id);
