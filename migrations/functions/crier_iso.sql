-- Times as the API writes them (Date.toISOString: UTC, milliseconds, Z).
CREATE OR REPLACE FUNCTION crier_iso(p timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(p AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
