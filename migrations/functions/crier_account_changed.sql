-- Copies remember the accounts posts target (id → profile, platform, username, status) for a few seconds, so a
-- create is one statement; any change to those columns, or a deletion, from whatever client, tells every copy
-- to forget the account at once. Refreshed credentials and other columns are not such a change. The insert of
-- a post checks its accounts itself, so a lost notification costs at most a stale username in an answer.
CREATE OR REPLACE FUNCTION crier_account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('crier_account_changed', OLD.id::text);
  RETURN NULL;
END $$;
