-- The most connected (not disconnected) accounts a profile may have; null is unlimited.
ALTER TABLE "profile_limits" ADD COLUMN "accounts" integer;
