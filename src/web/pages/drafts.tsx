import { api } from "../api.ts";
import { excerpt } from "../posts-data.ts";
import { Link } from "../router.tsx";
import type { Draft } from "../types.ts";
import { ErrorNote, PageTitle, StatusBadge, useLoad, when } from "../ui.tsx";

export function DraftsPage() {
  const drafts = useLoad(() => api<{ data: Draft[] }>("GET", "/v1/drafts?limit=100").then((r) => r.data));
  const remove = async (id: string) => {
    await api("DELETE", `/v1/drafts/${id}`);
    await drafts.reload();
  };
  return (
    <>
      <PageTitle actions={<Link href="/compose">New post</Link>}>Drafts</PageTitle>
      <ErrorNote error={drafts.error} />
      {drafts.data?.length === 0 ? <p class="muted">No drafts. "Save draft" on Compose keeps one here.</p> : null}
      <ul class="cards">
        {drafts.data?.map((d) => (
          <li class="card" key={d.id}>
            <div class="grow">
              <Link href={`/drafts/${d.id}`}>{excerpt(d.content)}</Link>
              <div class="muted small">
                <StatusBadge status={d.status} /> updated {when(d.updated_at)} · {d.media.length} media ·{" "}
                {d.selected_account_ids.length} account(s)
              </div>
            </div>
            <div class="actions">
              <Link href={`/drafts/${d.id}`} class="button">
                Edit
              </Link>
              <button type="button" onClick={() => void remove(d.id)}>
                Delete
              </button>
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}
