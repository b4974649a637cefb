-- A copy wrote each batch of publish results as a statement of its own and then claimed the slots they
-- freed with another: two statements, two commits and two round trips for every turn of a slot, and the
-- slot stayed empty while both ran (bench/dispatch: 2,331 result writes beside 1,655 claims for 10,000
-- targets). The claim can now carry the results waiting in the copy: one transaction writes them and then
-- claims, and the accounts and slots they free are claimed in that same call. The result write itself
-- moves here from src/engine/recorder.ts, so both paths run one statement.
--
-- The results are fenced on our claim and on what the target was when we took it (a publish whose target
-- another copy declared expired may still record the real outcome; a status check records only while the
-- target is still submitted). The ids come as an array besides the rows so the plan reads the targets
-- through the primary key: joined only to the recordset, the cached generic plan scanned the whole table.
CREATE OR REPLACE FUNCTION crier_record_results(p_rows jsonb, p_ids uuid[], p_claimed_by text)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_written integer;
BEGIN
  UPDATE post_targets t SET status = v.status, platform_post_id = v.ppid, platform_post_url = v.url,
    published_at = v.published_at, error = v.error, error_code = v.code, due_at = v.due_at,
    submitted_handle = v.handle, submit_deadline = v.deadline, lease_until = NULL, updated_at = v.at,
    reconcile_at = v.reconcile_at, reconcile_since = v.reconcile_since, reconcile_until = v.reconcile_until
  FROM jsonb_to_recordset(p_rows) AS v(id uuid, status text, ppid text, url text, published_at timestamptz,
      error text, code text, due_at timestamptz, handle text, deadline timestamptz, at timestamptz, held_as text,
      reconcile_at timestamptz, reconcile_since timestamptz, reconcile_until timestamptz)
  WHERE t.id = ANY (p_ids) AND t.id = v.id AND t.claimed_by = p_claimed_by
    AND (t.status = v.held_as
      OR (v.held_as = 'processing' AND t.status = 'failed' AND t.error_code = 'outcome_unknown'));
  GET DIAGNOSTICS v_written = ROW_COUNT;
  RETURN v_written;
END
$$;
--> statement-breakpoint
-- Writes the results first, so the claim after it (a new snapshot) sees their accounts idle again.
CREATE OR REPLACE FUNCTION crier_record_and_claim(
  p_rows jsonb, p_ids uuid[],
  p_now timestamptz, p_lease_until timestamptz, p_claimed_by text, p_caps jsonb, p_limit integer, p_busy uuid[]
) RETURNS TABLE (
  id uuid, post_id uuid, account_id uuid, platform text, attempts integer,
  target jsonb, content text, media jsonb, account jsonb, sandbox boolean, reply_to text, root text
)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  IF cardinality(p_ids) > 0 THEN
    PERFORM crier_record_results(p_rows, p_ids, p_claimed_by);
  END IF;
  IF p_limit > 0 THEN
    RETURN QUERY SELECT * FROM crier_claim(p_now, p_lease_until, p_claimed_by, p_caps, p_limit, p_busy, NULL);
  END IF;
END
$$;
