-- Whether a profile has an active endpoint: the condition of the webhook triggers (their WHEN clauses).
CREATE OR REPLACE FUNCTION crier_webhooks_listening(p_profile uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.profile_id = p_profile AND e.is_active)
$$;
