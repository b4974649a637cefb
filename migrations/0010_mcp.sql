CREATE TABLE "mcp_tool_calls" (
	"profile_id" uuid NOT NULL REFERENCES "profiles"("id") ON DELETE cascade,
	"tool" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mcp_tool_calls_profile_id_tool_key_pk" PRIMARY KEY("profile_id","tool","key")
);
