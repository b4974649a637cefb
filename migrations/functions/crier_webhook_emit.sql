-- The outbox write: one event row and one delivery per active endpoint subscribed to its type, in the
-- transaction of the change that caused it. Nothing is written when nobody listens.
CREATE OR REPLACE FUNCTION crier_webhook_emit(p_profile uuid, p_type text, p_data jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ev uuid;
BEGIN
  IF p_data IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.profile_id = p_profile
      AND e.is_active AND (p_type = ANY (e.events) OR '*' = ANY (e.events))) THEN
    RETURN;
  END IF;
  INSERT INTO webhook_events (profile_id, type, payload)
    VALUES (p_profile, p_type, jsonb_build_object('type', p_type, 'timestamp', crier_iso(now()), 'data', p_data))
    RETURNING id INTO ev;
  INSERT INTO webhook_deliveries (event_id, endpoint_id, profile_id, event_type, next_attempt_at)
    SELECT ev, e.id, p_profile, p_type, now() FROM webhook_endpoints e
    WHERE e.profile_id = p_profile AND e.is_active AND (p_type = ANY (e.events) OR '*' = ANY (e.events))
    ORDER BY e.created_at, e.id;
END $$;
