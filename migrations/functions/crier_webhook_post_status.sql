-- Aggregate post events: a change of the derived status since the last one told (queued has no event).
CREATE OR REPLACE FUNCTION crier_webhook_post_status(p_profile uuid, p_post uuid, p_before text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_status text := crier_post_status(p_post);
  told text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM posts WHERE id = p_post) THEN RETURN; END IF;
  SELECT status INTO told FROM webhook_post_states WHERE post_id = p_post FOR UPDATE;
  IF NOT FOUND THEN
    -- A post from before any endpoint listened: compare with what this change started from.
    INSERT INTO webhook_post_states (post_id, status) VALUES (p_post, now_status) ON CONFLICT (post_id) DO NOTHING;
    told := coalesce(p_before, now_status);
  ELSE
    UPDATE webhook_post_states SET status = now_status WHERE post_id = p_post AND status <> now_status;
  END IF;
  IF told <> now_status AND now_status <> 'queued' THEN
    PERFORM crier_webhook_emit(p_profile, 'post.' || now_status, crier_post_json(p_post));
  END IF;
END $$;
