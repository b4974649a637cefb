-- post.created, deferred to the commit (trigger crier_webhook_posts): the event describes what the
-- transaction committed, and is written inside it.
CREATE OR REPLACE FUNCTION crier_webhook_posts_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF crier_webhooks_listening(NEW.profile_id) AND EXISTS (SELECT 1 FROM posts WHERE id = NEW.id) THEN
    INSERT INTO webhook_post_states (post_id, status) VALUES (NEW.id, crier_post_status(NEW.id))
      ON CONFLICT (post_id) DO NOTHING;
    PERFORM crier_webhook_emit(NEW.profile_id, 'post.created', crier_post_json(NEW.id));
  END IF;
  RETURN NULL;
END $$;
