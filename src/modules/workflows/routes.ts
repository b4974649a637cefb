import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { created, IdempotencyHeader } from "../../http/idempotency.ts";
import { Data, errors, Paged, Uuid } from "../../http/model.ts";
import { checkWorkflow } from "../../engine/workflows.ts";
import { DeleteResult } from "../accounts/model.ts";
import { Workflow, WorkflowCheck, WorkflowCreate, WorkflowItem, WorkflowListQuery, WorkflowPatch } from "./model.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });

export function workflowsRoutes(ctx: AppContext) {
  // Recorded as claimed_by while a check polls: the same lease the engine's polls take.
  const checker = `api:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  return new Elysia({ name: "workflows", prefix: "/v1/workflows", detail: { tags: ["Workflows"] } })
    .use(auth(ctx))
    .post(
      "",
      async ({ principal, body, headers, set }) =>
        created(set, await service.createWorkflow(ctx, principal.profileId, body, headers["idempotency-key"])),
      {
        scope: "workflows:write",
        body: WorkflowCreate,
        headers: IdempotencyHeader,
        response: { 201: Data(Workflow), ...errors(400, 403, 409) },
        detail: {
          summary: "Create a workflow",
          description:
            "Copies future posts of the source account to the target accounts. The source's platform must declare capabilities.source (else 400 source_not_supported); " +
            "targets must be active destination accounts of this profile other than the source. Every rule of WorkflowSettings is a 400 validation_error naming the field. " +
            "403 workflow_limit_reached when the profile's limit (crier profiles set-limits) is reached. is_active true sets last_enabled_at: only content published after it is copied. " +
            "The answer has every default filled in. A replay with the same Idempotency-Key and body answers 201 with the original workflow.",
        },
      },
    )
    .get("", ({ principal, query }) => service.listWorkflows(ctx, principal.profileId, query), {
      scope: "workflows:read",
      query: WorkflowListQuery,
      response: { 200: Paged(Workflow), ...errors(400) },
      detail: {
        summary: "List workflows",
        description:
          "Most recently updated first (updated_at, then id, descending): editing a record moves it to the front; page with meta.next_after and meta.next_after_id.",
      },
    })
    .get(
      "/:id",
      async ({ principal, params }) => ({ data: await service.getWorkflow(ctx, principal.profileId, params.id) }),
      {
        scope: "workflows:read",
        params: IdParams,
        response: { 200: Data(Workflow), ...errors(400, 404) },
        detail: { summary: "Read a workflow" },
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({
        data: await service.updateWorkflow(ctx, principal.profileId, params.id, body),
      }),
      {
        scope: "workflows:write",
        params: IdParams,
        body: WorkflowPatch,
        response: { 200: Data(Workflow), ...errors(400, 404) },
        detail: {
          summary: "Update a workflow",
          description:
            "Any creatable field; the result is checked again as on create (settings, when given, replace the old ones). " +
            "Turning is_active on sets last_enabled_at (what was published meanwhile is not copied); turning it off removes the queued items in the same transaction.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.deleteWorkflow(ctx, principal.profileId, params.id) }),
      {
        scope: "workflows:write",
        params: IdParams,
        response: { 200: Data(DeleteResult), ...errors(400, 404) },
        detail: {
          summary: "Delete a workflow",
          description: "Deletes the workflow and its queued items; posts it already created stay.",
        },
      },
    )
    .post(
      "/:id/check",
      async ({ principal, params }) => {
        const result = await checkWorkflow(ctx, principal.profileId, params.id, {
          claimedBy: checker,
          leaseMs: ctx.config.publishLeaseSeconds * 1000,
        });
        return {
          data: {
            checked_at: ctx.clock.now().toISOString(),
            found: result.found,
            items: await service.itemsBySource(ctx, result.taken),
          },
        };
      },
      {
        scope: "workflows:write",
        params: IdParams,
        response: { 200: Data(WorkflowCheck), ...errors(400, 404, 409) },
        detail: {
          summary: "Poll the source now",
          description:
            "Runs the scheduled poll now, under the same lease (409 workflow_check_in_progress while another poll of this workflow runs; 409 workflow_inactive when it is off). " +
            "Answers with the source posts this check took; a source that cannot be read shows in last_error of the workflow.",
        },
      },
    )
    .get(
      "/:id/items",
      async ({ principal, params, query }) => service.listItems(ctx, principal.profileId, params.id, query),
      {
        scope: "workflows:read",
        params: IdParams,
        query: WorkflowListQuery,
        response: { 200: Paged(WorkflowItem), ...errors(400, 404) },
        detail: {
          summary: "What the workflow did",
          description:
            "One entry per source post taken, the most recently taken first, with each destination's state: queued (slot_at), skipped (reason_code and reason: the filter or the destination rule), " +
            "posted (post_id) or failed (the post's reason).",
        },
      },
    );
}
