import type { WorkflowItem } from "../../modules/workflows/model.ts";
import { Link } from "../router.tsx";
import type { Account } from "../types.ts";
import { PlatformIcon, StatusBadge, when } from "../ui.tsx";
import { handle } from "./workflow-form.tsx";

/**
 * The workflow's log: each source post it took, newest first, and per destination what became of it:
 * copied (with the post), queued (with its slot), skipped (the rule and why) or failed (the reason).
 */
export function WorkflowItems(props: { items: WorkflowItem[]; accounts: Account[] }) {
  const byId = new Map(props.accounts.map((a) => [a.id, a]));
  if (!props.items.length)
    return <p class="muted">Nothing taken yet: posts the source publishes while the workflow is on appear here.</p>;
  return (
    <ol class="workflow-items" aria-label="Source posts taken">
      {props.items.map((item) => (
        <li key={item.id} class="workflow-item" data-source-item={item.source_item_id}>
          <p class="small muted">
            {item.kind} post published {when(item.published_at)}, taken {when(item.created_at)}
            {item.source_url ? (
              <>
                {" · "}
                <a href={item.source_url} target="_blank" rel="noopener noreferrer">
                  the source post
                </a>
              </>
            ) : null}
          </p>
          <ul class="destinations">
            {item.destinations.map((d) => {
              const a = byId.get(d.account_id);
              return (
                <li key={d.account_id} class="destination-state" data-status={d.status}>
                  <div class="row">
                    <PlatformIcon platform={d.platform ?? a?.platform ?? "?"} size={20} />
                    <span class="grow">{a ? handle(a.username) : d.account_id}</span>
                    <StatusBadge status={d.status === "posted" ? "copied" : d.status} />
                  </div>
                  {d.status === "queued" ? <p class="small">Queued for {when(d.slot_at)}</p> : null}
                  {d.status === "skipped" || d.status === "failed" ? (
                    <p class="small reason">
                      {d.reason ?? "No reason given."}
                      {d.reason_code ? <code> {d.reason_code}</code> : null}
                    </p>
                  ) : null}
                  {d.caption ? <blockquote class="caption small">{d.caption}</blockquote> : null}
                  {d.post_id ? (
                    <Link href={`/posts/${d.post_id}`} class="small">
                      The copy
                    </Link>
                  ) : null}
                </li>
              );
            })}
          </ul>
        </li>
      ))}
    </ol>
  );
}
