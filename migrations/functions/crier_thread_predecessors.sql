-- The thread rule, once: the earlier items of a target's thread (same post, same account, no variant, a
-- lower position), first item first. A thread item waits until all of them are published (crier_claim),
-- replies to the last of them (the engine's job selection) and is skipped once one of them can no longer
-- be published (housekeeping). Plain SQL and STABLE, so the planner inlines it into each caller.
CREATE OR REPLACE FUNCTION crier_thread_predecessors(p_post uuid, p_account uuid, p_position integer, p_variant text)
RETURNS SETOF post_targets
LANGUAGE sql STABLE
AS $$
  SELECT e.* FROM post_targets e
  WHERE p_variant IS NULL AND e.target_variant IS NULL
    AND e.post_id = p_post AND e.account_id = p_account AND e.position < p_position
  ORDER BY e.position
$$;
