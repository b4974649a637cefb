import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { created, IdempotencyHeader } from "../../http/idempotency.ts";
import { Data, errors, Paged, Uuid } from "../../http/model.ts";
import { IGNORED_FIELDS_NOTE, ignoreUnknownKeys } from "../../http/ignored-fields.ts";
import { handlingPreference, LENIENT_APPLIED, LENIENT_NOTE } from "../../http/prefer.ts";
import { DeleteResult } from "../accounts/model.ts";
import { Post, PostCreate, PostListQuery, PostPatch, PostTarget, PostValidation } from "./model.ts";
import { validatePost } from "./validate.ts";
import * as service from "./service.ts";

const IdParams = t.Object({ id: Uuid });
const TargetParams = t.Object({ id: Uuid, targetId: Uuid });

export function postsRoutes(ctx: AppContext) {
  return new Elysia({ name: "posts", prefix: "/v1/posts", detail: { tags: ["Posts"] } })
    .use(auth(ctx))
    .post(
      "",
      async ({ principal, body, headers, set, request }) => {
        const lenient = handlingPreference(request) === "lenient";
        if (lenient) Object.assign(set.headers, LENIENT_APPLIED);
        return created(
          set,
          await service.createPost(ctx, principal.profileId, body, headers["idempotency-key"], { lenient }),
        );
      },
      {
        scope: "posts:write",
        body: PostCreate,
        transform: ignoreUnknownKeys(PostCreate, ["targets"]),
        headers: IdempotencyHeader,
        response: { 201: Data(Post), ...errors(400, 409, 413) },
        detail: {
          summary: "Create a post",
          description:
            "Publishes now (publish_at absent or null: targets pending, post queued) or later (targets and post scheduled). " +
            "Extension: queue: true instead of publish_at schedules each target on its account's next free posting-queue slot (see /v1/accounts/{id}/queue; 400 queue_and_publish_at, queue_empty). " +
            "Every target is checked against its account's media_requirements, platform_options and text limit first: a violation is a 400 whose message names the target. " +
            "Unknown, foreign, disconnected or source-only accounts are 400 target_account_not_found, target_account_disconnected, target_not_destination; platforms Crier cannot publish to yet are 400 platform_not_supported. " +
            "The same account listed twice makes a thread where the platform has threads. draft_id marks that draft scheduled. " +
            "A replay with the same Idempotency-Key and body answers 201 with the original post and Idempotent-Replayed: true. " +
            "409 target_accounts_changed when the target accounts changed under three attempts in a row (nothing is stored; send it again). " +
            IGNORED_FIELDS_NOTE +
            " " +
            LENIENT_NOTE,
        },
      },
    )
    .post(
      "/validate",
      async ({ principal, body, set, request }) => {
        const lenient = handlingPreference(request) === "lenient";
        if (lenient) Object.assign(set.headers, LENIENT_APPLIED);
        return { data: await validatePost(ctx, principal.profileId, body, { lenient }) };
      },
      {
        scope: "posts:write",
        body: PostCreate,
        transform: ignoreUnknownKeys(PostCreate, ["targets"]),
        response: { 200: Data(PostValidation), ...errors(400, 413) },
        detail: {
          summary: "Check a post without creating it",
          description:
            "Takes the body of POST /v1/posts; nothing is saved and nothing is published. Answers 200 with every problem found, not only the first: " +
            "post-level ones (media URLs, publish_at, draft_id) in data.problems, and per target its problems (each with the code POST /v1/posts would answer), " +
            "the text length as that platform counts it with its limit and unit, and the media it would receive. Nothing is cut or dropped unless lenient handling is asked for: what would not fit is a problem. " +
            "A body that validates (data.ok) is accepted by POST /v1/posts unless the accounts or media change in between: both run the same checks. " +
            "A body that breaks the schema itself is a 400 validation_error, as on create. " +
            IGNORED_FIELDS_NOTE +
            " " +
            LENIENT_NOTE,
        },
      },
    )
    .get("", ({ principal, query }) => service.listPosts(ctx, principal.profileId, query), {
      scope: "posts:read",
      query: PostListQuery,
      response: { 200: Paged(Post), ...errors(400) },
      detail: {
        summary: "List posts",
        description:
          "Most recently updated first (updated_at, then id, descending): editing a record moves it to the front; page with meta.next_after and meta.next_after_id. Filters: status (the derived aggregate status), origin, account_id (posts with a target on that account).",
      },
    })
    .get(
      "/:id",
      async ({ principal, params }) => ({ data: await service.getPost(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:read",
        params: IdParams,
        response: { 200: Data(Post), ...errors(400, 404) },
        detail: {
          summary: "Read a post",
          description:
            "status is derived from the targets: all cancelled → cancelled; any processing or submitted, or some finished while others wait → processing; " +
            "all waiting → queued (due now) or scheduled; all finished → published (every target not cancelled was published), failed (none was) or partial. Cancelled targets are otherwise ignored.",
        },
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body, set, request }) => {
        const lenient = handlingPreference(request) === "lenient";
        const { lenientApplied, ...post } = await service.updatePost(ctx, principal.profileId, params.id, body, {
          lenient,
        });
        if (lenientApplied) Object.assign(set.headers, LENIENT_APPLIED);
        return { data: post };
      },
      {
        scope: "posts:write",
        params: IdParams,
        body: PostPatch,
        transform: ignoreUnknownKeys(PostPatch, ["targets"]),
        response: { 200: Data(Post), ...errors(400, 404, 409) },
        detail: {
          summary: "Update a scheduled post",
          description:
            "Only while the post is scheduled (else 409 post_not_editable). Every target is checked again as on create; targets, when given, replace the current ones. " +
            "A queued post (created with queue: true) keeps its slots through an edit of content or media; a new publish_at or targets take it off the queue and free its slots (without publish_at, every target goes at the post's publish_at, its earliest slot). " +
            "A post created with Prefer: handling=lenient stays lenient: its targets are fitted again to what the edit sends (Preference-Applied says so); an edit may also ask for it. " +
            IGNORED_FIELDS_NOTE,
        },
      },
    )
    .post(
      "/:id/publish",
      async ({ principal, params }) => ({ data: await service.publishNow(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(Post), ...errors(400, 404, 409) },
        detail: {
          summary: "Publish a scheduled post now",
          description:
            "Scheduled targets become due now and are claimed at once by this copy's engine: the answer is processing (queued on an API-only copy). 409 post_not_scheduled otherwise. A queued post's slots are freed.",
        },
      },
    )
    .post(
      "/:id/cancel",
      async ({ principal, params }) => ({ data: await service.cancelPost(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(Post), ...errors(400, 404, 409) },
        detail: {
          summary: "Cancel a post",
          description:
            "Pending and scheduled targets become cancelled; the record stays. A scheduled post becomes cancelled; a queued one too, " +
            "unless the engine claimed a target first (that target goes on; the others are cancelled). On a partly published post the waiting " +
            "targets are cancelled and the published ones stay published (the post's status then follows them). Targets being published " +
            "(processing, submitted) are left alone. 409 post_not_cancellable when no target is waiting. The upstream's clients also cancel with " +
            "DELETE /v1/posts/{id}, which removes the record instead. Queue slots held by accounts whose targets are now all cancelled are freed (queue_slot becomes null).",
        },
      },
    )
    .post(
      "/:id/retry",
      async ({ principal, params }) => ({ data: await service.retryPost(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(Post), ...errors(400, 404, 409) },
        detail: {
          summary: "Retry failed targets",
          description:
            "Failed targets (and thread items skipped because of them) go again now. 409 nothing_to_retry when none failed. outcome_unknown targets are retried only this way, at the caller's risk of a duplicate.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.deletePost(ctx, principal.profileId, params.id) }),
      {
        scope: "posts:write",
        params: IdParams,
        response: { 200: Data(DeleteResult), ...errors(400, 404, 409) },
        detail: {
          summary: "Delete a post",
          description:
            "Removes the record once no target is processing or submitted (else 409 post_processing); published content stays on the platforms. " +
            "On a scheduled or queued post nothing is published afterwards (a target claimed by the engine first makes it 409 post_processing). " +
            "On a partly published post the record of what was published goes too, with the waiting targets; use POST /v1/posts/{id}/cancel to keep it. " +
            "Deleting a post that is already gone is 404 not_found, which clients cancelling a batch may read as done. A queued post's slots are freed.",
        },
      },
    )
    .get(
      "/:id/targets/:targetId",
      async ({ principal, params }) => ({
        data: await service.getTarget(ctx, principal.profileId, params.id, params.targetId),
      }),
      {
        scope: "posts:read",
        params: TargetParams,
        response: { 200: Data(PostTarget), ...errors(400, 404) },
        detail: { summary: "Read one target of a post" },
      },
    )
    .post(
      "/:id/targets/:targetId/retry",
      async ({ principal, params }) => ({
        data: await service.retryTarget(ctx, principal.profileId, params.id, params.targetId),
      }),
      {
        scope: "posts:write",
        params: TargetParams,
        response: { 200: Data(PostTarget), ...errors(400, 404, 409) },
        detail: {
          summary: "Retry one failed target",
          description: "409 target_not_retryable unless the target failed.",
        },
      },
    )
    .post(
      "/:id/targets/:targetId/cancel",
      async ({ principal, params }) => ({
        data: await service.cancelTarget(ctx, principal.profileId, params.id, params.targetId),
      }),
      {
        scope: "posts:write",
        params: TargetParams,
        response: { 200: Data(PostTarget), ...errors(400, 404, 409) },
        detail: {
          summary: "Cancel one waiting target",
          description:
            "409 target_not_cancellable unless the target is pending or scheduled. The post's queue slot on this account is freed once none of its targets there waits.",
        },
      },
    );
}
