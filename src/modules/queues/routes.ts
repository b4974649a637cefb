import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, DataList, errors, Uuid } from "../../http/model.ts";
import { NextQuery, Queue, QueueOccurrence, QueuePut, ShuffledPost } from "./model.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });

export function queuesRoutes(ctx: AppContext) {
  return new Elysia({ name: "queues", prefix: "/v1/accounts", detail: { tags: ["Accounts"] } })
    .use(auth(ctx))
    .get(
      "/:id/queue",
      async ({ principal, params }) => ({ data: await service.getQueue(ctx, principal.profileId, params.id) }),
      {
        scope: "accounts:read",
        params: IdParams,
        response: { 200: Data(Queue), ...errors(400, 404) },
        detail: {
          summary: "Read an account's posting queue",
          description:
            'Extension: the account\'s weekly posting slots and their IANA time zone. An account that never had a queue answers an empty one (time_zone "UTC", slots [], updated_at null). ' +
            "An account of another profile is 404.",
        },
      },
    )
    .put(
      "/:id/queue",
      async ({ principal, params, body }) => ({
        data: await service.putQueue(ctx, principal.profileId, params.id, body),
      }),
      {
        scope: "accounts:write",
        params: IdParams,
        body: QueuePut,
        response: { 200: Data(Queue), ...errors(400, 404) },
        detail: {
          summary: "Set an account's posting queue",
          description:
            "Extension: replaces the account's weekly slots. Each slot is a wall-clock time in time_zone: a 09:00 slot is 09:00 local on both sides of a daylight-saving change (its UTC time moves). " +
            "A time the zone skips on a spring-forward night is moved forward by the gap (02:30 becomes 03:30 that night); a time it repeats when clocks go back is its first occurrence. " +
            "Errors: 400 invalid_time_zone, invalid_slot (naming slots[i]), duplicate_slot, too_many_slots. " +
            "Posts already queued keep the slots they took, even ones no longer in the queue: POST /v1/accounts/{id}/queue/shuffle moves them onto the new slots.",
        },
      },
    )
    .get(
      "/:id/queue/next",
      async ({ principal, params, query }) => ({
        data: await service.nextFree(ctx, principal.profileId, params.id, query.count ?? 10),
      }),
      {
        scope: "accounts:read",
        params: IdParams,
        query: NextQuery,
        response: { 200: DataList(QueueOccurrence), ...errors(400, 404) },
        detail: {
          summary: "The coming free slots of an account's queue",
          description:
            "Extension: the next count free slots (default 10, at most 100), earliest first, from a minute ahead: the first is the slot the next post created with queue: true takes on this account. " +
            "Empty when the queue has no slots.",
        },
      },
    )
    .post(
      "/:id/queue/shuffle",
      async ({ principal, params }) => ({ data: await service.shuffle(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: DataList(ShuffledPost), ...errors(400, 404) },
        detail: {
          summary: "Re-spread an account's queued posts",
          description:
            "Extension: the account's queued posts whose targets on it are all still scheduled are put in a random order on the earliest free slots from a minute ahead, " +
            "filling the gaps cancelled posts left and using slots added since they were queued. Each moved post's publish_at becomes its earliest target's time. " +
            "Answers the new assignment, earliest first (empty when nothing is queued). 400 queue_empty when the account has no slots. Needs posts:write: it moves posts.",
        },
      },
    );
}
