CREATE TABLE "sandbox_state" (
	"platform" text PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"state" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
