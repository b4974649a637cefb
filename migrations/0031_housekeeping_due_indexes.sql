-- Housekeeping looks at due targets every tick of every copy for the few it must settle without
-- publishing: thread replies whose earlier item can no longer be published, and targets whose account was
-- deleted. It read every waiting due target to find them: with a backlog of 20,000 due targets that was
-- 11 ms a tick per copy, the costliest statement after the claim with four copies (bench/scale), and more
-- with the 100,000 of a burst. Only replies (position > 0) can have an earlier item, and only targets
-- without an account can have lost it: each look now reads an index that holds only those.
CREATE INDEX post_targets_waiting_reply_idx ON post_targets (due_at) WHERE status IN ('pending', 'scheduled') AND position > 0;
--> statement-breakpoint
CREATE INDEX post_targets_waiting_orphan_idx ON post_targets (due_at) WHERE status IN ('pending', 'scheduled') AND account_id IS NULL;
