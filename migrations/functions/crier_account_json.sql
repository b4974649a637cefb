-- An Account as the API shows it. Capabilities and media requirements come from the plugin registry: the sender fills them in.
CREATE OR REPLACE FUNCTION crier_account_json(a accounts) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', a.id, 'platform', a.platform, 'username', a.username,
    'avatar_url', a.avatar_url, 'status', a.status, 'capabilities', NULL, 'media_requirements', NULL,
    'created_at', crier_iso(a.created_at), 'updated_at', crier_iso(a.updated_at))
$$;
