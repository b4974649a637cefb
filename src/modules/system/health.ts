import { Elysia, t } from "elysia";
import { sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";

export function healthRoutes(ctx: AppContext) {
  return new Elysia({ name: "health", detail: { tags: ["System"] } })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }),
      detail: { summary: "Liveness", description: "200 while the process is up. No authentication." },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        try {
          await ctx.db.rows(sql`select 1 as ok`);
          return { status: "ok" as const, database: ctx.db.kind };
        } catch (e) {
          set.status = 503;
          return { status: "unavailable" as const, database: ctx.db.kind, error: "the database does not answer" };
        }
      },
      {
        detail: {
          summary: "Readiness",
          description: "200 when the database answers a query, 503 otherwise. No authentication.",
        },
      },
    );
}
