-- Creating profiles from the dashboard is a right an operator grants per user (crier users set
-- --can-create-profiles true): off by default, so `profiles set-limits` cannot be sidestepped by adding profiles.
ALTER TABLE "users" ADD COLUMN "can_create_profiles" boolean DEFAULT false NOT NULL;
