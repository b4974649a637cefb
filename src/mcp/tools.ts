/**
 * The MCP tools: one per REST operation, named as the hosted service's MCP server names them where it
 * has the tool (list_accounts … update_workflow), verb_noun for the rest. A tool names its route only;
 * its input schema, scope and validation come from that route (catalog.ts), so they cannot drift.
 */

export interface ToolDeclaration {
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The route's path as the app declares it (":id" parameters). */
  path: string;
  /** When to use it and what it costs; the route's own summary follows. */
  description: string;
  kind: "read" | "write" | "destructive";
  /** Narrows what the route answers (list_active_accounts). */
  filter?: (data: unknown) => unknown;
  /** A one-line summary for the model, beside the JSON. */
  summary?: (data: any) => string;
  /**
   * Takes on_limit ("reject" | "fit", default fit): with fit the route is asked for lenient handling
   * (Prefer: handling=lenient), as the upstream's tools adapt content instead of refusing it.
   */
  onLimit?: boolean;
}

/** The adjustments lenient handling made, as one sentence per adjusted target. */
function adjustmentSummary(targets: { platform?: string | null; adjustments?: { message: string }[] }[]): string {
  const adjusted = targets
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => t.adjustments?.length)
    .map(({ t, i }) => `targets[${i}] (${t.platform}): ${t.adjustments!.map((a) => a.message).join(" ")}`);
  return adjusted.length ? ` Adjusted to fit: ${adjusted.join(" ")}` : "";
}

const activeOnly = (data: unknown) =>
  Array.isArray(data) ? data.filter((a) => (a as { status?: string }).status !== "disconnected") : data;

export const TOOLS: ToolDeclaration[] = [
  {
    name: "list_accounts",
    method: "GET",
    path: "/v1/accounts",
    kind: "read",
    description:
      "Lists the connected social accounts of this profile with their platform, status, capabilities and media_requirements. Use it to find account ids for targets and what each platform accepts.",
  },
  {
    name: "list_active_accounts",
    method: "GET",
    path: "/v1/accounts",
    kind: "read",
    filter: activeOnly,
    description: "Lists only the accounts that can be published to now (disconnected ones left out).",
  },
  {
    name: "check_account",
    method: "GET",
    path: "/v1/accounts/:id/check",
    kind: "read",
    description:
      "Asks the account's platform whether its token works, when it expires, which scopes are missing and whether it can publish (one or two cheap reads, never a post). Use it when a publish failed for authorization or before an important post; not in a loop.",
    summary: (d: { can_publish: boolean; problems: string[] }) =>
      d.can_publish ? "The account can publish." : `The account cannot publish: ${d.problems.join(" ")}`,
  },
  {
    name: "list_accounts_at_risk",
    method: "GET",
    path: "/v1/accounts/at-risk",
    kind: "read",
    description:
      "Lists accounts whose scheduled posts will not go out unless the account is connected again (needs reconnecting now, or credentials ending before the first scheduled post). Empty when all is well.",
  },
  {
    name: "connect_account",
    method: "POST",
    path: "/v1/accounts/connect/:platform",
    kind: "write",
    description:
      "Starts connecting an account: returns a URL the user must open in a browser themselves (valid five minutes). " +
      "Never ask the user for passwords, app passwords or provider credentials in chat: they are entered on that page only. List accounts afterwards.",
    summary: (d) =>
      `Ask the user to open ${d.authorization_url ?? d.hosted_url} in a browser to connect the account. ` +
      "Never ask for or accept passwords or provider credentials in this chat.",
  },
  {
    name: "disconnect_account",
    method: "DELETE",
    path: "/v1/accounts/:id",
    kind: "destructive",
    description:
      "Disconnects an account: its credentials are forgotten and posts can no longer target it until it is connected again.",
  },
  {
    name: "get_queue",
    method: "GET",
    path: "/v1/accounts/:id/queue",
    kind: "read",
    description:
      "Reads an account's posting queue: its weekly slots (day mon..sun, time HH:MM) in an IANA time zone. Posts created with queue: true take the next free slot.",
  },
  {
    name: "set_queue",
    method: "PUT",
    path: "/v1/accounts/:id/queue",
    kind: "write",
    description:
      "Replaces an account's weekly posting slots and their IANA time zone (wall-clock times: 09:00 stays 09:00 local across daylight-saving changes). Posts already queued keep their slots; use shuffle_queue to move them.",
  },
  {
    name: "next_queue_slots",
    method: "GET",
    path: "/v1/accounts/:id/queue/next",
    kind: "read",
    description:
      "Lists the coming free slots of an account's queue (count, default 10): the first is where the next post created with queue: true goes.",
    summary: (d) =>
      Array.isArray(d) && d.length
        ? `${d.length} free slot(s); next: ${d[0].local} local (${d[0].at}).`
        : "The queue has no slots: set some with set_queue.",
  },
  {
    name: "shuffle_queue",
    method: "POST",
    path: "/v1/accounts/:id/queue/shuffle",
    kind: "write",
    description:
      "Re-spreads an account's queued posts in random order over the earliest free slots, filling gaps; changes when they publish.",
  },
  {
    name: "create_upload_url",
    method: "POST",
    path: "/v1/media/uploads",
    kind: "write",
    description:
      "Creates an upload ticket: a signed URL to PUT the file's raw bytes to. For agents that cannot PUT bytes, use upload_media_from_url or upload_media_base64 instead.",
  },
  {
    name: "upload_media_from_url",
    method: "POST",
    path: "/v1/media/from-url",
    kind: "write",
    description:
      "Stores a file fetched by the server from a public http(s) URL (never from private or loopback addresses) and returns the media with its public_url to use in posts.",
  },
  {
    name: "upload_media_base64",
    method: "POST",
    path: "/v1/media/base64",
    kind: "write",
    description:
      "Stores a small file sent as base64 (see the data field for the size limit) and returns the media with its public_url to use in posts.",
  },
  {
    name: "list_media",
    method: "GET",
    path: "/v1/media",
    kind: "read",
    description:
      "Lists the files already uploaded to this profile, newest first, with their facts (dimensions, duration, codec): reuse one's public_url in a post instead of uploading it again. type=image or video narrows it.",
    summary: (d: unknown[]) => `${d.length} upload(s) on this page.`,
  },
  {
    name: "get_media",
    method: "GET",
    path: "/v1/media/:id",
    kind: "read",
    description: "Reads an uploaded media by its media_id: its public_url, type, size and dimensions.",
  },
  {
    name: "list_drafts",
    method: "GET",
    path: "/v1/drafts",
    kind: "read",
    description: "Lists drafts, newest first.",
  },
  {
    name: "create_draft",
    method: "POST",
    path: "/v1/drafts",
    kind: "write",
    description: "Saves a draft: nothing is published. Use it when the user wants to review before posting.",
  },
  { name: "get_draft", method: "GET", path: "/v1/drafts/:id", kind: "read", description: "Reads one draft." },
  {
    name: "update_draft",
    method: "PATCH",
    path: "/v1/drafts/:id",
    kind: "write",
    description: "Changes a draft; needs the expected_updated_at it was read with.",
  },
  {
    name: "delete_draft",
    method: "DELETE",
    path: "/v1/drafts/:id",
    kind: "destructive",
    description: "Deletes a draft for good.",
  },
  {
    name: "validate_post",
    method: "POST",
    path: "/v1/posts/validate",
    kind: "read",
    description:
      "Checks a post exactly as create_post would, without saving or publishing anything: every problem per target, the text length as each platform counts it and its limit. Free; use it before create_post.",
    summary: (d) =>
      d.ok
        ? "The post is valid: create_post will accept it."
        : `The post has ${d.problems.length + d.targets.reduce((n: number, t: { problems: unknown[] }) => n + t.problems.length, 0)} problem(s); nothing was saved.`,
    onLimit: true,
  },
  {
    name: "create_post",
    method: "POST",
    path: "/v1/posts",
    kind: "write",
    description:
      "Publishes a post to the given accounts now (publish_at absent), schedules it, or with queue: true puts it on each account's next free queue slot. Publishing is public and cannot be undone once done; call validate_post first. Pass idempotency_key so a retry never posts twice. " +
      'With repeat ({rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=10", time_zone: "Europe/Berlin"}) and publish_at it starts a recurring series: the answer is the first occurrence, with series_id. ' +
      "on_limit fit (the default) adapts what a platform cannot take (text cut at a word boundary, surplus or refused media dropped, hashtags past the cap removed) and reports each change; on_limit reject refuses instead. " +
      "A target's first_comment is posted by the same account right after its post (where the account's capabilities.first_comment is true; it is never cut to fit); the post's targets[].first_comment.status says what became of it.",
    onLimit: true,
    summary: (d) => `create_post succeeded: id ${d.id}, status ${d.status}.${adjustmentSummary(d.targets ?? [])}`,
  },
  {
    name: "bulk_create_posts",
    method: "POST",
    path: "/v1/posts/bulk",
    kind: "write",
    description:
      "Creates many posts at once (up to 1,000; each item of posts is a create_post body). Call it with dry_run true first: every post is checked as validate_post checks one, " +
      "and the answer lists each row's problems by row number (posts[0] is row 1) with nothing created. Without dry_run the posts that pass are created (published now or scheduled) and the rest reported; " +
      "rows that fail never stop the others. Sending the same posts again creates nothing twice (each row's key is made from the row, or idempotency_key:row). " +
      "on_limit fit (the default) adapts what a platform cannot take and reports it; reject refuses instead.",
    onLimit: true,
    summary: (d) =>
      d.dry_run
        ? `Dry run: ${d.ok} of ${d.total} post(s) can be created, ${d.failed} have problems (see rows); nothing was created.`
        : `Created ${d.created} post(s)${d.replayed ? `, ${d.replayed} existed already` : ""}; ${d.failed} row(s) failed (see rows).`,
  },
  {
    name: "list_posts",
    method: "GET",
    path: "/v1/posts",
    kind: "read",
    description: "Lists posts, newest first, with their status per target.",
  },
  {
    name: "get_post",
    method: "GET",
    path: "/v1/posts/:id",
    kind: "read",
    description: "Reads a post and the status of each target (published URL or error).",
  },
  {
    name: "update_post",
    method: "PATCH",
    path: "/v1/posts/:id",
    kind: "write",
    description: "Changes a scheduled post (content, media, time, targets); refused once publishing started.",
  },
  {
    name: "publish_post_now",
    method: "POST",
    path: "/v1/posts/:id/publish",
    kind: "write",
    description: "Publishes a scheduled post right away. Public and cannot be undone.",
  },
  {
    name: "cancel_post",
    method: "POST",
    path: "/v1/posts/:id/cancel",
    kind: "destructive",
    description: "Cancels the targets of a post that have not been published yet; what is published stays.",
  },
  {
    name: "retry_post",
    method: "POST",
    path: "/v1/posts/:id/retry",
    kind: "write",
    description:
      "Publishes the failed targets of a post again. A target that failed with outcome_unknown may already be live: retrying it risks a duplicate.",
  },
  {
    name: "list_series",
    method: "GET",
    path: "/v1/series",
    kind: "read",
    description:
      "Lists recurring series (posts made with repeat): rule, time zone, template, status and the next times.",
  },
  {
    name: "get_series",
    method: "GET",
    path: "/v1/series/:id",
    kind: "read",
    description: "Reads one recurring series: its rule, template, next 5 times and the ids of its occurrence posts.",
  },
  {
    name: "update_series",
    method: "PATCH",
    path: "/v1/series/:id",
    kind: "write",
    description:
      "Changes a recurring series' content, media, targets or timing (rule, time_zone, starts_at); the change reaches every occurrence not yet published, never published ones.",
  },
  {
    name: "delete_series",
    method: "DELETE",
    path: "/v1/series/:id",
    kind: "destructive",
    description:
      "Stops a recurring series: its waiting occurrence is cancelled and no more are made; published occurrences stay.",
  },
  {
    name: "delete_post",
    method: "DELETE",
    path: "/v1/posts/:id",
    kind: "destructive",
    description: "Deletes the post record; content already published stays on the platforms.",
  },
  {
    name: "get_target",
    method: "GET",
    path: "/v1/posts/:id/targets/:targetId",
    kind: "read",
    description: "Reads one target of a post.",
  },
  {
    name: "retry_target",
    method: "POST",
    path: "/v1/posts/:id/targets/:targetId/retry",
    kind: "write",
    description: "Publishes one failed target again (public; outcome_unknown risks a duplicate).",
  },
  {
    name: "cancel_target",
    method: "POST",
    path: "/v1/posts/:id/targets/:targetId/cancel",
    kind: "destructive",
    description: "Cancels one target that has not been published yet.",
  },
  {
    name: "list_workflows",
    method: "GET",
    path: "/v1/workflows",
    kind: "read",
    description: "Lists workflows (automatic cross-posting from a source account).",
  },
  {
    name: "create_workflow",
    method: "POST",
    path: "/v1/workflows",
    kind: "write",
    description:
      "Creates a workflow that copies new posts of a source account to destinations, publicly and automatically.",
  },
  { name: "get_workflow", method: "GET", path: "/v1/workflows/:id", kind: "read", description: "Reads one workflow." },
  {
    name: "update_workflow",
    method: "PATCH",
    path: "/v1/workflows/:id",
    kind: "write",
    description: "Changes a workflow (pause it with status, change destinations, settings).",
  },
  {
    name: "delete_workflow",
    method: "DELETE",
    path: "/v1/workflows/:id",
    kind: "destructive",
    description: "Deletes a workflow; posts it already made stay.",
  },
  {
    name: "check_workflow",
    method: "POST",
    path: "/v1/workflows/:id/check",
    kind: "write",
    description: "Polls the workflow's source account now instead of waiting for the next poll.",
  },
  {
    name: "list_workflow_items",
    method: "GET",
    path: "/v1/workflows/:id/items",
    kind: "read",
    description: "Lists what a workflow copied or skipped, and why.",
  },
  {
    name: "get_analytics",
    method: "GET",
    path: "/v1/analytics",
    kind: "read",
    description:
      "Reads stored engagement numbers and followers per account, per post and per day over a period; free, answers at once.",
  },
  {
    name: "get_post_analytics",
    method: "GET",
    path: "/v1/posts/:id/analytics",
    kind: "read",
    description: "Reads the stored engagement numbers of one post per target.",
  },
  {
    name: "refresh_analytics",
    method: "POST",
    path: "/v1/analytics/refresh",
    kind: "write",
    description: "Asks for fresh numbers from the platforms now (rate-limited per profile).",
  },
];
