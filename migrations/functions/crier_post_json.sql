-- Post exactly as toPost() of src/modules/posts/service.ts returns it (tests/modules/webhooks compares them).
CREATE OR REPLACE FUNCTION crier_post_json(p_post uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', p.id, 'content', p.content, 'external_id', p.external_id, 'media', p.media, 'origin', p.origin,
    'publish_at', crier_iso(p.publish_at), 'status', crier_post_status(p.id), 'draft_id', p.draft_id,
    'series_id', p.series_id,
    'created_at', crier_iso(p.created_at), 'updated_at', crier_iso(p.updated_at),
    'targets', coalesce((SELECT jsonb_agg(crier_target_json(t) ORDER BY t.position, t.created_at, t.id)
      FROM post_targets t WHERE t.post_id = p.id), '[]'::jsonb))
  FROM posts p WHERE p.id = p_post
$$;
