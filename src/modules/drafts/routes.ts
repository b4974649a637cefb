import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { created, IdempotencyHeader } from "../../http/idempotency.ts";
import { Data, errors, Paged, Uuid } from "../../http/model.ts";
import { DeleteResult } from "../accounts/model.ts";
import { Draft, DraftCreate, DraftListQuery, DraftPatch } from "./model.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });

export function draftsRoutes(ctx: AppContext) {
  return new Elysia({ name: "drafts", prefix: "/v1/drafts", detail: { tags: ["Drafts"] } })
    .use(auth(ctx))
    .get("", ({ principal, query }) => service.listDrafts(ctx, principal.profileId, query), {
      scope: "posts:read",
      query: DraftListQuery,
      response: { 200: Paged(Draft), ...errors(400) },
      detail: {
        summary: "List unscheduled drafts",
        description:
          "Most recently updated first (updated_at, then id, descending): editing a record moves it to the front; page with meta.next_after and meta.next_after_id.",
      },
    })
    .post(
      "",
      async ({ principal, body, headers, set }) =>
        created(set, await service.createDraft(ctx, principal.profileId, body, headers["idempotency-key"])),
      {
        scope: "posts:write",
        body: DraftCreate,
        headers: IdempotencyHeader,
        response: { 201: Data(Draft), ...errors(400, 409, 413) },
        detail: {
          summary: "Create a draft",
          description:
            "A replay with the same Idempotency-Key and body answers 201 with the original draft and the header Idempotent-Replayed: true.",
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        data: service.toDraft(await service.getDraftRow(ctx.db.db, principal.profileId, params.id)),
      }),
      {
        scope: "posts:read",
        params: IdParams,
        response: { 200: Data(Draft), ...errors(400, 404) },
        detail: { summary: "Read a draft" },
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({
        data: await service.updateDraft(ctx, principal.profileId, params.id, body),
      }),
      {
        scope: "posts:write",
        params: IdParams,
        body: DraftPatch,
        response: { 200: Data(Draft), ...errors(400, 404, 409) },
        detail: {
          summary: "Update a draft",
          description:
            "Compare-and-set on expected_updated_at: 409 draft_conflict when the draft changed since it was read.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.deleteDraft(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(DeleteResult), ...errors(400, 404) },
        detail: { summary: "Delete a draft" },
      },
    );
}
