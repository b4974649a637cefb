-- A claim that first writes the publish results its copy has waiting (src/engine/pool.ts, recorder.ts):
-- one round trip and one commit where there were two. Where the platform answers slowly, results and
-- claims come at the same pace (a claim waits until a batch of slots frees, each freed by a result), and
-- each statement and commit costs PostgreSQL about as much as the work it carries (bench/dispatch (b)).
-- The results are written first, in the same transaction, so the claim's fresh snapshot already sees
-- their targets settled. Both keep their own rules: crier_record_results is fenced on this copy's claim,
-- crier_claim locks accounts and rows as it always does. The commit is durable, as a claim's must be.
CREATE OR REPLACE FUNCTION crier_record_and_claim(
  p_rows jsonb, p_ids uuid[],
  p_now timestamptz, p_lease_until timestamptz, p_claimed_by text, p_caps jsonb, p_limit integer,
  p_busy uuid[], p_post uuid
) RETURNS TABLE (
  id uuid, post_id uuid, account_id uuid, platform text, attempts integer,
  target jsonb, content text, media jsonb, account jsonb, sandbox boolean, reply_to text, root text
)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM crier_record_results(p_rows, p_ids, p_claimed_by);
  RETURN QUERY SELECT * FROM crier_claim(p_now, p_lease_until, p_claimed_by, p_caps, p_limit, p_busy, p_post);
END
$$;
