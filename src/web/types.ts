// The wire shapes, taken from the API's own TypeBox models (type-only: nothing of the server is bundled).
export type { Account, AccountAtRisk, AccountCheck, DeleteResult } from "../modules/accounts/model.ts";
export type { Post, PostTarget, PostCreate, PostValidation, Problem } from "../modules/posts/model.ts";
export type { Draft } from "../modules/drafts/model.ts";
export type { UploadTicket, Media } from "../modules/media/model.ts";
export type { ConnectResult } from "../modules/connect/model.ts";
import type { describeSession } from "../modules/users/service.ts";
import type { TextUnit } from "../platform/text.ts";

export type SessionInfo = Awaited<ReturnType<typeof describeSession>>;

export interface PlatformInfo {
  platform: string;
  display_name: string;
  status: "implemented" | "declared_only";
  connection_mode: string | null;
  text_limit: { max: number; unit: TextUnit; withMediaMax?: number; maxBytes?: number };
  options_schema: JsonSchema;
}

export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  const?: unknown;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}
