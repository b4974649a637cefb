import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, errors, Paged, Uuid } from "../../http/model.ts";
import { Series, SeriesListQuery, SeriesPatch } from "./model.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });

/** Extension: recurring posts (POST /v1/posts with repeat makes one). */
export function seriesRoutes(ctx: AppContext) {
  return new Elysia({ name: "series", prefix: "/v1/series", detail: { tags: ["Posts"] } })
    .use(auth(ctx))
    .get("", ({ principal, query }) => service.listSeries(ctx, principal.profileId, query), {
      scope: "posts:read",
      query: SeriesListQuery,
      response: { 200: Paged(Series), ...errors(400) },
      detail: {
        summary: "List recurring series",
        description:
          "Extension: the recurring posts of this profile (made by POST /v1/posts with repeat), most recently updated first; page with meta.next_after and meta.next_after_id. Filter: status.",
      },
    })
    .get(
      "/:id",
      async ({ principal, params }) => ({ data: await service.getSeries(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:read",
        params: IdParams,
        response: { 200: Data(Series), ...errors(400, 404) },
        detail: {
          summary: "Read a recurring series",
          description:
            "Extension: the rule, zone, template and status, the rule's next 5 times, and the ids of its occurrence posts (each also listed by GET /v1/posts?series_id=).",
        },
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({
        data: await service.updateSeries(ctx, principal.profileId, params.id, body),
      }),
      {
        scope: "posts:write",
        params: IdParams,
        body: SeriesPatch,
        response: { 200: Data(Series), ...errors(400, 404, 409) },
        detail: {
          summary: "Change a recurring series",
          description:
            "Extension: content, media and targets replace the template of every occurrence not yet made, and reach the occurrence waiting for its time through the same update and checks as PATCH /v1/posts/{id} (a violation is the same 400, and nothing changes). " +
            "rule, time_zone and starts_at change the timing: the waiting occurrence moves to the new rule's first time after now; a rule with no time left cancels it and ends the series. " +
            "Published, failed and cancelled occurrences stay as they are. 400 invalid_repeat_rule / invalid_time_zone as on create; 409 series_not_active once the series ended or was cancelled.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.deleteSeries(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(Series), ...errors(400, 404) },
        detail: {
          summary: "Cancel a recurring series",
          description:
            "Extension: no further occurrence is made, and the occurrences waiting (scheduled, or due and not yet claimed by the engine) are cancelled; their records stay, and published occurrences stay on the platforms. " +
            "Answers the series with status cancelled; deleting it again answers the same.",
        },
      },
    );
}
