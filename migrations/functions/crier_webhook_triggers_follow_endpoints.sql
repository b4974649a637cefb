-- The trigger on webhook_endpoints (created in migration 0020): the webhook triggers on posts and
-- post_targets are enabled only while at least one active endpoint exists anywhere, since asking every row
-- whether its profile listens cost a quarter of a claim's time on a server with no endpoint at all
-- (bench/dispatch, pgbench). A change to webhook_endpoints enables or disables them in its own
-- transaction, so from the commit that creates the first endpoint every later change fires them, and one
-- that removes the last stops them.
CREATE OR REPLACE FUNCTION crier_webhook_triggers_follow_endpoints() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_wanted boolean;
  v_enabled boolean;
BEGIN
  -- Endpoint changes decide one at a time: the one waiting here then looks (a new snapshot) at what the
  -- one before it committed, so two changes at once cannot leave the triggers in the wrong state.
  PERFORM pg_advisory_xact_lock(7242033);
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE is_active) INTO v_wanted;
  SELECT tgenabled <> 'D' INTO v_enabled FROM pg_trigger
    WHERE tgrelid = 'post_targets'::regclass AND tgname = 'crier_webhook_targets';
  IF v_wanted AND NOT v_enabled THEN
    ALTER TABLE posts ENABLE TRIGGER crier_webhook_posts;
    ALTER TABLE post_targets ENABLE TRIGGER crier_webhook_targets;
    ALTER TABLE post_targets ENABLE TRIGGER crier_webhook_targets_before;
  ELSIF v_enabled AND NOT v_wanted THEN
    ALTER TABLE posts DISABLE TRIGGER crier_webhook_posts;
    ALTER TABLE post_targets DISABLE TRIGGER crier_webhook_targets;
    ALTER TABLE post_targets DISABLE TRIGGER crier_webhook_targets_before;
  END IF;
  RETURN NULL;
END $$;
