-- PostTarget exactly as toTarget() of src/modules/posts/service.ts returns it (tests/modules/webhooks
-- compares the two): a webhook carries the resource as the API showed it then, adjustments included.
CREATE OR REPLACE FUNCTION crier_target_json(t post_targets) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'target_post_id', t.id, 'account_id', t.account_id, 'platform', t.platform,
    'target_variant', t.target_variant,
    'username', (SELECT a.username FROM accounts a WHERE a.id = t.account_id),
    'status', t.status, 'error', t.error, 'error_code', t.error_code,
    'platform_post_id', t.platform_post_id, 'platform_post_url', t.platform_post_url,
    'scheduled_time', crier_iso(t.scheduled_time), 'queue_slot', crier_iso(t.queue_slot),
    'published_at', crier_iso(t.published_at),
    'attempts', t.attempts, 'content_override', t.content_override,
    'platform_options', coalesce(t.platform_options, 'null'::jsonb),
    'adjustments', coalesce(t.adjustments, '[]'::jsonb),
    'first_comment', CASE WHEN t.first_comment IS NULL OR t.first_comment_status IS NULL THEN NULL ELSE jsonb_build_object(
      'text', t.first_comment, 'status', t.first_comment_status, 'platform_comment_id', t.first_comment_id,
      'platform_comment_url', t.first_comment_url, 'error', t.first_comment_error,
      'error_code', t.first_comment_error_code) END)
$$;
