-- The claim asks, for each account it could take a target of, whether that account is publishing
-- somewhere already (crier_claim). Statistics say few targets are processing, as they mostly are, and
-- PostgreSQL then answered through (status, due_at), reading every processing target for every candidate
-- account: the copies' slots times the candidates (196,608 rows and 12,800 buffer pages for one claim of
-- 128 during four copies' drain, bench/scale (d)). This index holds only processing targets, by account.
-- Its predicate is an expression that no other index's condition can serve, so the claim's look (written
-- the same way) has this index alone to use, whatever the statistics say.
CREATE INDEX post_targets_processing_account_idx ON post_targets (account_id) WHERE (status || '') = 'processing';
