-- Copies cache API key lookups (hash → principal) for a few seconds; any change to a key (revoke, expiry,
-- scopes, deletion), from whatever client, tells every copy to forget it at once. The last-use stamp is
-- not such a change: it would empty every copy's cache once a minute per key.
CREATE OR REPLACE FUNCTION crier_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('crier_api_key_changed', OLD.hash);
  RETURN NULL;
END $$;
