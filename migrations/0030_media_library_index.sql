-- GET /v1/media lists a profile's uploads newest first, paged by (uploaded_at, id): read through this
-- index, not by sorting every upload of the profile.
CREATE INDEX media_library_idx ON media (profile_id, uploaded_at, id) WHERE status = 'uploaded';
