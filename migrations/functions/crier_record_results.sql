-- The recorder's batch of publish results (src/engine/recorder.ts), as a function: its plan is cached
-- per connection like the claim's, and tests/engine/plans.test.ts can count what it scans.
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
    reconcile_at = v.reconcile_at, reconcile_since = v.reconcile_since, reconcile_until = v.reconcile_until,
    -- A first comment waiting for its post falls due in the same write that records the post published
    -- (src/engine/first-comment.ts posts it).
    first_comment_status = CASE WHEN v.status = 'published' AND t.first_comment_status = 'waiting'
      THEN 'pending' ELSE t.first_comment_status END,
    first_comment_due_at = CASE WHEN v.status = 'published' AND t.first_comment_status = 'waiting'
      THEN v.at ELSE t.first_comment_due_at END
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
