-- When an account's stored credentials stop working without the user (a 60-day Instagram or Threads
-- token, a refresh token with a known end), in the clear beside the encrypted credentials, so the
-- token-refresh job finds the accounts to refresh ahead of it without decrypting every row.
-- credentials_refresh_after spaces the job's attempts per account and leases the account to the copy
-- refreshing it.
ALTER TABLE accounts ADD COLUMN credentials_expire_at timestamptz;
--> statement-breakpoint
ALTER TABLE accounts ADD COLUMN credentials_refresh_after timestamptz;
--> statement-breakpoint
CREATE INDEX accounts_credentials_expire_idx ON accounts (credentials_expire_at)
  WHERE credentials_expire_at IS NOT NULL AND status = 'active';
