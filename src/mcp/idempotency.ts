/**
 * idempotency_key for tools whose route has no Idempotency-Key of its own (update_post, cancel_post,
 * upload_media_from_url, ...), with the REST semantics: the same key and arguments give the original
 * result without acting again; the same key with other arguments is idempotency_conflict. The result is
 * kept per profile, tool and key in the database, so every copy behind a load balancer agrees.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { mcpToolCalls } from "../db/schema.ts";
import { requestHash } from "../http/idempotency.ts";
import { errorResult } from "./server.ts";

export async function oncePerKey(
  db: Db,
  scope: { profileId: string; tool: string; key: string },
  args: Record<string, unknown>,
  run: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  if (scope.key.length < 1 || scope.key.length > 200)
    return errorResult({
      code: "validation_error",
      message: "idempotency_key must be 1 to 200 characters.",
      hint: "Send a short unique string per intended action.",
    });
  const { idempotency_key: _, ...input } = args;
  const hash = requestHash(input);
  const where = and(
    eq(mcpToolCalls.profileId, scope.profileId),
    eq(mcpToolCalls.tool, scope.tool),
    eq(mcpToolCalls.key, scope.key),
  );
  const inserted = await db.db
    .insert(mcpToolCalls)
    .values({ profileId: scope.profileId, tool: scope.tool, key: scope.key, requestHash: hash })
    .onConflictDoNothing()
    .returning({ key: mcpToolCalls.key });
  if (!inserted.length) {
    const [existing] = await db.db.select().from(mcpToolCalls).where(where);
    if (existing && existing.requestHash !== hash)
      return errorResult({
        code: "idempotency_conflict",
        message: "This idempotency_key was already used with different arguments.",
        hint: "Use a new idempotency_key for a different call, or resend the original arguments.",
      });
    if (existing?.result) return existing.result as CallToolResult;
    return errorResult({
      code: "idempotency_in_progress",
      message: "A call with this idempotency_key is still running.",
      hint: "Wait a moment and send the same call again to get its result.",
    });
  }
  let result: CallToolResult;
  try {
    result = await run();
  } catch (e) {
    await db.db.delete(mcpToolCalls).where(where);
    throw e;
  }
  // A refused call changed nothing: the key is freed so the corrected call can use it.
  if (result.isError) await db.db.delete(mcpToolCalls).where(where);
  else
    await db.db
      .update(mcpToolCalls)
      .set({ result: result as Record<string, unknown> })
      .where(where);
  return result;
}
