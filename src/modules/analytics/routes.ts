import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, ErrorBody, errors, Uuid } from "../../http/model.ts";
import { ANALYTICS_SCHEDULE } from "../../domain/analytics-schedule.ts";
import { AnalyticsQuery, PostAnalytics, PostTargetAnalytics, RefreshResult } from "./model.ts";
import * as service from "./service.ts";

const SCHEDULE = ANALYTICS_SCHEDULE.map((s) => s.text).join(", ");

export function analyticsRoutes(ctx: AppContext) {
  return new Elysia({ name: "analytics", detail: { tags: ["Analytics"] } })
    .use(auth(ctx))
    .get(
      "/v1/analytics",
      async ({ principal, query }) => ({ data: await service.overview(ctx, principal.profileId, query) }),
      {
        scope: "posts:read",
        query: AnalyticsQuery,
        response: { 200: Data(PostAnalytics), ...errors(400, 404) },
        detail: {
          summary: "Account and post overview",
          description:
            "Answers at once from the numbers stored by the background reads " +
            `(${SCHEDULE} after publishing; followers at connect, then weekly); refreshing is true while a read is due or under way. ` +
            "posts: newest first, one entry per post made through Crier (each copy a destination) and one per post made on the platform (origin native). " +
            "daily (an extension) sums the numbers per calendar day of the range in time_zone, for a chart. " +
            "account_id of another profile is 404 not_found.",
        },
      },
    )
    .post(
      "/v1/analytics/refresh",
      async ({ principal, set }) => {
        set.status = 202;
        return { data: await service.requestRefresh(ctx, principal.profileId) };
      },
      {
        // It makes the engine call every platform of the profile: work a read-only key must not trigger.
        scope: "posts:write",
        response: { 202: Data(RefreshResult), 429: ErrorBody },
        detail: {
          summary: "Read the numbers now",
          description:
            "Makes every post of the profile and its accounts' platform posts due now; the engine reads them within seconds. Once per profile every 5 minutes, else 429 rate_limited with Retry-After. " +
            "Needs posts:write, not posts:read: it is not a read of stored numbers but starts calls to every connected platform, so a read-only key cannot trigger them.",
        },
      },
    )
    .get(
      "/v1/posts/:id/analytics",
      async ({ principal, params }) => ({ data: await service.postAnalytics(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:read",
        params: t.Object({ id: Uuid }),
        response: { 200: Data(PostTargetAnalytics), ...errors(400, 404) },
        detail: {
          summary: "Numbers of one post",
          description:
            "One entry per target (per variant for platforms that fan one account out, such as Snapchat placements). " +
            "Numbers a platform does not give are null; after a failed read the previous numbers stay with their last_updated and metrics_status says why.",
        },
      },
    );
}
