-- The claim's window of the first due targets is read per platform, through this index (crier_claim step
-- 1). Read through the due time alone, a claim whose platforms had nothing due walked every waiting target
-- of the others, filtering each out: in bench/scale's burst a copy's claim for the platforms other than
-- the one with the backlog read up to 53,645 targets and 1,653 buffer pages to find nothing, and such
-- claims were three in four. Its predicate is an expression, as in migration 0032: with the plain status
-- condition the claim's generic plan kept reading post_targets_waiting_idx (due_at) and filtering by
-- platform, since the statistics of a one-platform table say the platform condition removes nothing.
CREATE INDEX post_targets_waiting_platform_idx ON post_targets (platform, due_at)
  WHERE (status || '') IN ('pending', 'scheduled');
