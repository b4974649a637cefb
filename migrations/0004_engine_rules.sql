CREATE TABLE "engine_jobs" (
	"name" text PRIMARY KEY NOT NULL,
	"next_run_at" timestamp (3) with time zone NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"held_by" text
);--> statement-breakpoint
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
--> statement-breakpoint
-- The engine's claim in one round trip (src/engine/claim.ts): as in 0003_claim_function, with the thread
-- rule taken from crier_thread_predecessors. A volatile plpgsql function takes a fresh snapshot for each
-- statement, so the second statement sees everything committed by whoever held an
-- account's advisory lock before this call took it: no two copies ever publish to one account at once.
CREATE OR REPLACE FUNCTION crier_claim(
  p_now timestamptz, p_lease_until timestamptz, p_claimed_by text, p_caps jsonb, p_limit integer,
  p_busy uuid[], p_post uuid
) RETURNS TABLE (id uuid, post_id uuid, account_id uuid, platform text, attempts integer)
LANGUAGE plpgsql VOLATILE
-- A generic plan cannot use the partial indexes for every argument combination: plan each call.
SET plan_cache_mode = force_custom_plan
AS $$
#variable_conflict use_column
DECLARE
  v_accounts uuid[];
BEGIN
  -- 1. Accounts with a due target, oldest due first, each locked with try: an account another claimer
  --    holds is skipped. The lock is volatile, so it runs only on the distinct accounts.
  SELECT array_agg(c.account_id) INTO v_accounts FROM (
    SELECT d.account_id FROM (
      SELECT DISTINCT w.account_id FROM (
        SELECT t.account_id FROM post_targets t
        WHERE t.status IN ('pending', 'scheduled') AND t.due_at <= p_now AND t.account_id IS NOT NULL
          AND coalesce((p_caps ->> t.platform)::int, 0) > 0
          AND NOT (t.account_id = ANY (p_busy))
          AND (p_post IS NULL OR t.post_id = p_post)
        ORDER BY t.due_at
        LIMIT p_limit * 4
      ) w
    ) d
    WHERE pg_try_advisory_xact_lock(7242032, hashtext(d.account_id::text))
  ) c;
  IF v_accounts IS NULL THEN
    RETURN;
  END IF;
  -- 2. Per locked account that is active and publishing nowhere: its first eligible due target (a thread
  --    item waits until every earlier item of its thread is published); caps per platform; rows locked
  --    with SKIP LOCKED (an API edit may hold them) and marked processing with a lease.
  RETURN QUERY
  WITH cand AS (
    SELECT f.id, f.platform, f.due_at
    FROM unnest(v_accounts) AS l(account_id)
    JOIN accounts a ON a.id = l.account_id AND a.status = 'active'
    CROSS JOIN LATERAL (
      SELECT t.id, t.platform, t.due_at FROM post_targets t
      WHERE t.account_id = l.account_id AND t.status IN ('pending', 'scheduled') AND t.due_at <= p_now
        AND (p_post IS NULL OR t.post_id = p_post)
        AND NOT EXISTS (
          SELECT 1 FROM crier_thread_predecessors(t.post_id, t.account_id, t.position, t.target_variant) e
          WHERE e.status <> 'published')
      ORDER BY t.due_at, t.position
      LIMIT 1
    ) f
    WHERE NOT EXISTS (SELECT 1 FROM post_targets p WHERE p.account_id = l.account_id AND p.status = 'processing')
  ), ranked AS (
    SELECT c.id, c.due_at, row_number() OVER (PARTITION BY c.platform ORDER BY c.due_at) AS rn,
           (p_caps ->> c.platform)::int AS cap
    FROM cand c
  ), picked AS (
    SELECT r.id FROM ranked r WHERE r.rn <= r.cap ORDER BY r.due_at LIMIT p_limit
  ), claimable AS (
    SELECT t.id FROM post_targets t
    WHERE t.id IN (SELECT pk.id FROM picked pk) AND t.status IN ('pending', 'scheduled')
    FOR UPDATE SKIP LOCKED
  )
  UPDATE post_targets t
  SET status = 'processing', attempts = t.attempts + 1, lease_until = p_lease_until,
      claimed_by = p_claimed_by, updated_at = p_now
  FROM claimable
  WHERE t.id = claimable.id
  RETURNING t.id, t.post_id, t.account_id, t.platform, t.attempts;
END
$$;
