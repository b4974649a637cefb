-- The most connected (not disconnected) accounts a profile may have; null is unlimited.
ALTER TABLE "profile_limits" ADD COLUMN "accounts" integer;--> statement-breakpoint

-- Lenient handling (Prefer: handling=lenient): what a target's platform gets when it differs from the
-- post (text cut, hashtags removed, media dropped), and the changes made. adjustments is null for a target
-- checked strictly and an array (maybe empty) for one fitted; fitted_* are null when nothing was changed.
ALTER TABLE "post_targets" ADD COLUMN "fitted_content" text;--> statement-breakpoint
ALTER TABLE "post_targets" ADD COLUMN "fitted_media" jsonb;--> statement-breakpoint
ALTER TABLE "post_targets" ADD COLUMN "adjustments" jsonb;--> statement-breakpoint

-- A webhook's PostTarget carries the adjustments as GET /v1/posts does (toTarget in the posts module).
CREATE OR REPLACE FUNCTION crier_target_json(t post_targets) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'target_post_id', t.id, 'account_id', t.account_id, 'platform', t.platform,
    'target_variant', t.target_variant,
    'username', (SELECT a.username FROM accounts a WHERE a.id = t.account_id),
    'status', t.status, 'error', t.error, 'error_code', t.error_code,
    'platform_post_id', t.platform_post_id, 'platform_post_url', t.platform_post_url,
    'scheduled_time', crier_iso(t.scheduled_time), 'published_at', crier_iso(t.published_at),
    'attempts', t.attempts, 'content_override', t.content_override,
    'platform_options', coalesce(t.platform_options, 'null'::jsonb),
    'adjustments', coalesce(t.adjustments, '[]'::jsonb))
$$;
