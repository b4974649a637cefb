-- The claim's second statement (RETURN QUERY in crier_claim, 0018) was planned anew on every call: its
-- generic plan keeps both branches of the optional post behind one-time filters and so is costed above a
-- custom plan, which has one branch folded away, and PostgreSQL's plan cache then picks a custom plan each
-- time. The generic plan runs exactly as fast (the filter drops the other branch before it reads a row),
-- so the planning was pure overhead: about 7 % of the database's time in bench/dispatch. Forced generic,
-- both statements are planned once per connection.
ALTER FUNCTION crier_claim(timestamptz, timestamptz, text, jsonb, integer, uuid[], uuid)
  SET plan_cache_mode = force_generic_plan;
