-- Recurring posts (issue 31): a series is a rule (an RFC 5545 subset) in a time zone and a template; each
-- occurrence is an ordinary post carrying series_id and series_index, created one ahead by the engine's
-- series job (src/engine/series.ts). template is what the client sent (content, media as stored on a post, targets); plan is
-- the targets as checked against their platforms (what the engine copies into the next occurrence).
CREATE TABLE post_series (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
  profile_id uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  rule text NOT NULL,
  time_zone text NOT NULL,
  starts_at timestamptz(3) NOT NULL,
  template jsonb NOT NULL,
  plan jsonb NOT NULL,
  lenient boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active',
  occurrences_created integer NOT NULL DEFAULT 0,
  last_occurrence_at timestamptz(3),
  last_error text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX post_series_page_idx ON post_series (profile_id, updated_at, id);
--> statement-breakpoint
-- The series job reads only active series.
CREATE INDEX post_series_active_idx ON post_series (updated_at) WHERE status = 'active';
--> statement-breakpoint
ALTER TABLE posts ADD COLUMN series_id uuid REFERENCES post_series(id) ON DELETE SET NULL;
--> statement-breakpoint
ALTER TABLE posts ADD COLUMN series_index integer;
--> statement-breakpoint
-- One post per occurrence, however many copies of the engine run the series job.
CREATE UNIQUE INDEX posts_series_occurrence_idx ON posts (series_id, series_index);
