-- Aggregate post events for a post that existed before any endpoint listened (no webhook_post_states row):
-- its status before the transaction is taken at the first target change, before that row is written, when
-- every other target still holds what it held before. The deferred trigger (crier_webhook_targets) runs at commit, after
-- all of the transaction's changes, and could only swap back the one target it fired for.
CREATE OR REPLACE FUNCTION crier_webhook_targets_before_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF crier_webhooks_listening(NEW.profile_id)
      AND NOT EXISTS (SELECT 1 FROM webhook_post_states WHERE post_id = NEW.post_id) THEN
    INSERT INTO webhook_post_states (post_id, status) VALUES (NEW.post_id, crier_post_status(NEW.post_id))
      ON CONFLICT (post_id) DO NOTHING;
  END IF;
  RETURN NEW;
END $$;
