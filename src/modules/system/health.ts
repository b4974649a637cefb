import { Elysia, t } from "elysia";
import { sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { mediaToolsReport } from "../../media/tools-report.ts";

/** /readyz answers within a second: a database slower than this counts as not answering. */
const DATABASE_PROBE_MS = 800;

const Readiness = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("unavailable")]),
  database: t.Union([t.Literal("pglite"), t.Literal("postgres")]),
  database_ms: t.Union([t.Number(), t.Null()], { description: "Round trip of `select 1`; null when it failed." }),
  engine: t.Union(
    [
      t.Object({
        last_tick_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
        claims_in_flight: t.Integer(),
        stalled: t.Boolean(),
      }),
      t.Null(),
    ],
    { description: "This copy's engine; null under `serve --no-scheduler`." },
  ),
  problems: t.Array(t.String()),
  media_tools: t.Object(
    {
      sharp: t.Boolean({ description: "sharp (libvips) loaded: images are read and converted." }),
      ffmpeg: t.Boolean({ description: "ffmpeg found (FFMPEG_PATH or PATH): video conversion and poster frames." }),
      ffprobe: t.Boolean({ description: "ffprobe found (FFPROBE_PATH, beside ffmpeg, or PATH): video facts." }),
      missing: t.Array(t.String(), { description: "What does not work for each missing tool, and how to add it." }),
    },
    {
      description:
        "The media tools of this copy. A missing one turns a feature off and is reported here; it never makes the copy unready.",
    },
  ),
});

export function healthRoutes(ctx: AppContext) {
  return new Elysia({ name: "health", detail: { tags: ["System"] } })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }),
      detail: { summary: "Liveness", description: "200 while the process is up. No authentication." },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const problems: string[] = [];
        const databaseMs = await roundTrip(ctx);
        if (databaseMs === null) problems.push("the database does not answer");
        const health = ctx.dispatch?.health();
        if (health?.stalled) {
          const last = health.lastTickAt ? `since ${health.lastTickAt.toISOString()}` : "since it started";
          problems.push(`the engine has not finished a tick ${last}`);
        }
        if (problems.length) set.status = 503;
        const mediaTools = await mediaToolsReport(ctx.config);
        return {
          status: problems.length ? ("unavailable" as const) : ("ok" as const),
          database: ctx.db.kind,
          database_ms: databaseMs,
          engine: health
            ? {
                last_tick_at: health.lastTickAt?.toISOString() ?? null,
                claims_in_flight: health.claimsInFlight,
                stalled: health.stalled,
              }
            : null,
          problems,
          media_tools: mediaTools,
        };
      },
      {
        response: { 200: Readiness, 503: Readiness },
        detail: {
          summary: "Readiness",
          description:
            "200 when the database answers `select 1` within 0.8 s and this copy's engine (if it runs one) finished a tick in the last 10 s; 503 otherwise, within a second. Reports the database round trip, the engine's last tick and the claims it holds, and the media tools found (sharp, ffmpeg, ffprobe) with what does not work without a missing one, which does not make the copy unready. No authentication.",
        },
      },
    );
}

/** Milliseconds for `select 1`, or null when the database is known down, fails or is too slow. */
async function roundTrip(ctx: AppContext): Promise<number | null> {
  if (ctx.db.availability?.down) return null;
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answered = await Promise.race([
      ctx.db.rows(sql`select 1 as ok`).then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), DATABASE_PROBE_MS);
      }),
    ]);
    if (answered) return Math.round((performance.now() - t0) * 100) / 100;
    // No answer within the probe's time: a fresh connection tells a hung server from a busy one.
    ctx.db.availability?.suspect();
    return null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
