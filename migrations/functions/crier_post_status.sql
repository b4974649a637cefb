-- The aggregate status of one post, from its targets as stored now.
CREATE OR REPLACE FUNCTION crier_post_status(p_post uuid) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT crier_post_status_of(coalesce(array_agg(status), '{}')) FROM post_targets WHERE post_id = p_post
$$;
