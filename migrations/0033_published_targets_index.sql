-- Analytics makes an item of every target that becomes published (src/engine/analytics-track.ts). Each
-- pass used to find them by a set difference over every published target and every item: at a million
-- published targets, all of both, every 15 seconds, and during bench/scale's burst 266,169 buffer pages a
-- pass (a fifth of PostgreSQL's time per published target). This index holds published targets by the
-- time they last changed, then id, so a pass reads only those published since the one before it, batch
-- after batch in the index's order. Its predicate is an expression, as in migration 0032: on small or
-- stale statistics PostgreSQL answered the same look through (status, due_at) otherwise, reading every
-- published target again.
CREATE INDEX post_targets_published_idx ON post_targets (updated_at, id) WHERE (status || '') = 'published';
--> statement-breakpoint
-- How far analytics' tracking has got, kept for every copy: when the last pass began (the next window
-- starts shortly before), when the last full pass began, and where the full pass under way has got to
-- (it is spread over passes). Kept by each process alone, a copy's first pass was a full one whenever it
-- came, and a copy that first held the analytics job during a burst read every published target then.
CREATE TABLE analytics_tracking (
  id integer PRIMARY KEY CHECK (id = 1),
  window_began timestamptz NOT NULL,
  full_at timestamptz NOT NULL,
  full_from uuid
);
