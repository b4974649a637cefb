-- postStatus() of src/domain/status.ts over an array of target statuses (tests check they agree).
CREATE OR REPLACE FUNCTION crier_post_status_of(p text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN count(*) FILTER (WHERE s <> 'cancelled') = 0 THEN 'cancelled'
    WHEN count(*) FILTER (WHERE s IN ('processing', 'submitted')) > 0 THEN 'processing'
    WHEN count(*) FILTER (WHERE s IN ('pending', 'scheduled')) = count(*) FILTER (WHERE s <> 'cancelled')
      THEN CASE WHEN count(*) FILTER (WHERE s = 'pending') > 0 THEN 'queued' ELSE 'scheduled' END
    WHEN count(*) FILTER (WHERE s IN ('pending', 'scheduled')) > 0 THEN 'processing'
    WHEN count(*) FILTER (WHERE s = 'published') = count(*) FILTER (WHERE s <> 'cancelled') THEN 'published'
    WHEN count(*) FILTER (WHERE s = 'published') = 0 THEN 'failed'
    ELSE 'partial' END
  FROM unnest(p) AS s
$$;
