-- The engine's claim in one round trip (src/engine/claim.ts). A volatile plpgsql function takes a fresh
-- snapshot for each statement, so the second statement sees everything committed by whoever held an
-- account's advisory lock before this call took it: no two copies ever publish to one account at once.
-- It also returns what each claimed target's publish needs (the target row, the post's content and media,
-- the account row, the profile's sandbox flag, the thread item it replies to and the thread's first item),
-- read by the same statement that marks the targets processing, under the snapshot in which they were
-- found eligible and locked.
--
-- Plans: each case of the optional post has its own statement or branch, so every statement keeps the
-- plan PostgreSQL caches for it. plan_cache_mode = force_generic_plan: the generic plan of the second
-- statement keeps both branches behind one-time filters and is costed above a custom plan, so without it
-- PostgreSQL would plan it anew on every call (about 7 % of the database's time in bench/dispatch), though
-- the generic plan runs exactly as fast. Both statements are planned once per connection.
CREATE OR REPLACE FUNCTION crier_claim(
  p_now timestamptz, p_lease_until timestamptz, p_claimed_by text, p_caps jsonb, p_limit integer,
  p_busy uuid[], p_post uuid
) RETURNS TABLE (
  id uuid, post_id uuid, account_id uuid, platform text, attempts integer,
  target jsonb, content text, media jsonb, account jsonb, sandbox boolean, reply_to text, root text
)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  v_accounts uuid[];
BEGIN
  -- 1. Accounts with a due target, oldest due first, each locked with try: an account another claimer
  --    holds is skipped. One statement for a post's own targets (found through the post) and one for all
  --    due work, so that each keeps one plan that fits every call.
  --    For all due work, per platform with free slots: a window of its first due targets, read through
  --    (platform, due_at) (migration 0034), so a platform with nothing due costs one index probe rather
  --    than a walk past every other platform's waiting targets; four times the platform's free slots,
  --    because some accounts turn out busy or held by another claimer. Its accounts are checked in order
  --    of their first due time and only until the platform's slots are filled: active, publishing nowhere,
  --    and locked. The checks are a filter between the sorted window and the LIMIT, so an account past it
  --    costs nothing and is never locked (CASE keeps the lock last), and the second statement reads the
  --    due targets of the accounts it can take, not of every account in the window (bench/scale (d) read
  --    412 accounts' targets to claim 124). One platform's backlog never takes another platform's slots.
  --    The status condition repeats the index's expression predicate (the plain one let the generic plan
  --    read the due-time index and filter by platform), and the account's status is a scalar subquery (as
  --    EXISTS, the generic plan hashed every account once per claim). Where the platforms' slots add up
  --    to more than p_limit, the accounts past it stay locked until this claim commits, untouched.
  IF p_post IS NULL THEN
    SELECT array_agg(c.account_id) INTO v_accounts FROM (
      SELECT x.account_id FROM jsonb_each_text(p_caps) AS pc(platform, cap)
      CROSS JOIN LATERAL (
        SELECT g.account_id, g.due FROM (
          SELECT w.account_id, min(w.due_at) AS due FROM (
            SELECT t.account_id, t.due_at FROM post_targets t
            WHERE t.platform = pc.platform AND (t.status || '') IN ('pending', 'scheduled') AND t.due_at <= p_now
              AND t.account_id IS NOT NULL AND NOT (t.account_id = ANY (p_busy))
            ORDER BY t.due_at
            LIMIT 4 * pc.cap::int
          ) w
          GROUP BY w.account_id
          ORDER BY due
        ) g
        WHERE CASE
          WHEN (SELECT a.status FROM accounts a WHERE a.id = g.account_id) = 'active'
            AND NOT EXISTS (
              SELECT 1 FROM post_targets p WHERE p.account_id = g.account_id AND p.status || '' = 'processing' OFFSET 0)
          THEN pg_try_advisory_xact_lock(7242032, hashtext(g.account_id::text))
          ELSE false END
        LIMIT pc.cap::int
      ) x
      ORDER BY x.due
      LIMIT p_limit
    ) c;
  ELSE
    SELECT array_agg(c.account_id) INTO v_accounts FROM (
      SELECT d.account_id FROM (
        SELECT DISTINCT t.account_id FROM post_targets t
        WHERE t.post_id = p_post AND t.status IN ('pending', 'scheduled') AND t.due_at <= p_now
          AND t.account_id IS NOT NULL AND coalesce((p_caps ->> t.platform)::int, 0) > 0
          AND NOT (t.account_id = ANY (p_busy))
      ) d
      WHERE pg_try_advisory_xact_lock(7242032, hashtext(d.account_id::text))
    ) c;
  END IF;
  IF v_accounts IS NULL THEN
    RETURN;
  END IF;
  -- 2. Per locked account that is active and publishing nowhere: its first eligible due target (a thread
  --    item waits until every earlier item of its thread is published); caps per platform; rows locked
  --    with SKIP LOCKED (an API edit may hold them) and marked processing with a lease; then the job of
  --    each, read under the same snapshot.
  RETURN QUERY
  WITH cand AS (
    SELECT f.id, f.platform, f.due_at
    FROM unnest(v_accounts) AS l(account_id)
    JOIN accounts a ON a.id = l.account_id AND a.status = 'active'
    -- Two branches, of which the argument runs one: each keeps a plan that reads the account's due
    -- targets in order and stops at the first eligible one.
    CROSS JOIN LATERAL (
      (SELECT t.id, t.platform, t.due_at FROM post_targets t
       WHERE p_post IS NULL
         AND t.account_id = l.account_id AND t.status IN ('pending', 'scheduled') AND t.due_at <= p_now
         AND NOT EXISTS (
           SELECT 1 FROM crier_thread_predecessors(t.post_id, t.account_id, t.position, t.target_variant) e
           WHERE e.status <> 'published')
       ORDER BY t.due_at, t.position
       LIMIT 1)
      UNION ALL
      (SELECT t.id, t.platform, t.due_at FROM post_targets t
       WHERE p_post IS NOT NULL AND t.post_id = p_post
         AND t.account_id = l.account_id AND t.status IN ('pending', 'scheduled') AND t.due_at <= p_now
         AND NOT EXISTS (
           SELECT 1 FROM crier_thread_predecessors(t.post_id, t.account_id, t.position, t.target_variant) e
           WHERE e.status <> 'published')
       ORDER BY t.due_at, t.position
       LIMIT 1)
    ) f
    -- Publishing nowhere: one lookup per account in the index of processing targets (migration 0032,
    -- whose predicate this condition repeats so that no other index serves it). OFFSET 0 keeps it a
    -- lookup per account rather than an anti-join over every processing target.
    WHERE NOT EXISTS (
      SELECT 1 FROM post_targets p WHERE p.account_id = l.account_id AND p.status || '' = 'processing' OFFSET 0)
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
  ), claimed AS (
    UPDATE post_targets t
    SET status = 'processing', attempts = t.attempts + 1, lease_until = p_lease_until,
        claimed_by = p_claimed_by, updated_at = p_now
    FROM claimable
    WHERE t.id = claimable.id
    RETURNING t.*
  )
  -- The thread items a reply names are read from the table: they were published before this statement's
  -- snapshot (the claim required it), and the target itself is not among them.
  SELECT c.id, c.post_id, c.account_id, c.platform, c.attempts, to_jsonb(c), p.content, p.media, to_jsonb(a),
    pr.sandbox,
    (SELECT e.platform_post_id FROM crier_thread_predecessors(c.post_id, c.account_id, c.position, c.target_variant) e
      ORDER BY e.position DESC LIMIT 1),
    (SELECT e.platform_post_id FROM crier_thread_predecessors(c.post_id, c.account_id, c.position, c.target_variant) e
      ORDER BY e.position ASC LIMIT 1)
  FROM claimed c
  JOIN posts p ON p.id = c.post_id
  JOIN accounts a ON a.id = c.account_id
  JOIN profiles pr ON pr.id = a.profile_id;
END
$$;
