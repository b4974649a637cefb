-- Posting queues (src/modules/queues): per account, weekly wall-clock slots in an IANA time zone. slots is
-- a JSON array of {"day": "mon".."sun", "time": "HH:MM"}. An account without a row has an empty queue.
CREATE TABLE account_queues (
  account_id uuid PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  profile_id uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  time_zone text NOT NULL,
  slots jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
-- The slots taken: one row per post and account (a thread's items and a post's variants on one account
-- share its slot). The primary key is what makes two posts never share a slot, whichever copy takes them;
-- deleting the post or the account frees it. The post is checked at commit: a create takes its slots
-- before it inserts the post, in the same transaction.
CREATE TABLE queue_slots (
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  slot_at timestamptz NOT NULL,
  post_id uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  profile_id uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  PRIMARY KEY (account_id, slot_at)
);
--> statement-breakpoint
CREATE UNIQUE INDEX queue_slots_post_idx ON queue_slots (post_id, account_id);
--> statement-breakpoint
-- The slot a queued target was given (its scheduled_time when it was queued); null unless queued.
ALTER TABLE post_targets ADD COLUMN queue_slot timestamptz;
