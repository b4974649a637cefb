-- target.published / failed / submitted and the post's aggregate events, deferred to the commit (trigger
-- crier_webhook_targets).
CREATE OR REPLACE FUNCTION crier_webhook_targets_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  cur post_targets;
  before_status text;
BEGIN
  IF NOT crier_webhooks_listening(NEW.profile_id) THEN RETURN NULL; END IF;
  SELECT * INTO cur FROM post_targets WHERE id = NEW.id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status AND cur.status = NEW.status
      AND NEW.status IN ('published', 'failed', 'submitted') THEN
    PERFORM crier_webhook_emit(NEW.profile_id, 'target.' || NEW.status,
      crier_target_json(cur) || jsonb_build_object('post_id', cur.post_id));
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status THEN
    SELECT crier_post_status_of(coalesce(array_agg(CASE WHEN t.id = NEW.id THEN OLD.status ELSE t.status END), '{}'))
      INTO before_status FROM post_targets t WHERE t.post_id = NEW.post_id;
  END IF;
  PERFORM crier_webhook_post_status(NEW.profile_id, NEW.post_id, before_status);
  RETURN NULL;
END $$;
