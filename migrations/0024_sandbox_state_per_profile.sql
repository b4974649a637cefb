-- Sandbox emulator state per profile (security issue 26): one document per sandbox profile and platform
-- instead of one per platform shared by every sandbox profile. The shared document a server kept so far
-- goes to each sandbox profile that has an account on the platform, so those accounts' tokens keep
-- working; what nobody's account uses is dropped.
ALTER TABLE "sandbox_state" DROP CONSTRAINT "sandbox_state_pkey";--> statement-breakpoint
ALTER TABLE "sandbox_state" ADD COLUMN "profile_id" uuid REFERENCES "profiles"("id") ON DELETE CASCADE;--> statement-breakpoint
INSERT INTO "sandbox_state" ("profile_id", "platform", "version", "state", "updated_at")
SELECT DISTINCT a."profile_id", s."platform", s."version", s."state", s."updated_at"
FROM "sandbox_state" s
JOIN "accounts" a ON a."platform" = s."platform"
JOIN "profiles" p ON p."id" = a."profile_id" AND p."sandbox"
WHERE s."profile_id" IS NULL;--> statement-breakpoint
DELETE FROM "sandbox_state" WHERE "profile_id" IS NULL;--> statement-breakpoint
ALTER TABLE "sandbox_state" ALTER COLUMN "profile_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "sandbox_state" ADD PRIMARY KEY ("profile_id", "platform");
