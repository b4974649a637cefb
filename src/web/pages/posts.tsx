import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { excerpt, postDate, postsPage } from "../posts-data.ts";
import { Link } from "../router.tsx";
import type { Account } from "../types.ts";
import { ErrorNote, PageTitle, PlatformIcon, StatusBadge, useLoad, when } from "../ui.tsx";

const STATUSES = ["scheduled", "queued", "processing", "published", "partial", "failed", "cancelled"];

export function PostsPage() {
  const [status, setStatus] = useState("");
  const [accountId, setAccountId] = useState("");
  // The cursors of the pages before this one, so "Newer" goes back exactly.
  const [cursors, setCursors] = useState<{ after?: string; after_id?: string }[]>([{}]);
  const cursor = cursors[cursors.length - 1];
  const accounts = useLoad(() => api<{ data: Account[] }>("GET", "/v1/accounts").then((r) => r.data));
  const page = useLoad(
    () => postsPage({ limit: "20", status, account_id: accountId, ...cursor }),
    [status, accountId, cursor],
  );
  const filter = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLSelectElement).value);
    setCursors([{}]);
  };
  return (
    <>
      <PageTitle actions={<Link href="/compose">New post</Link>}>Posts</PageTitle>
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={filter(setStatus)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Account
          <select value={accountId} onChange={filter(setAccountId)}>
            <option value="">Any</option>
            {accounts.data?.map((a) => (
              <option key={a.id} value={a.id}>
                {a.username} ({a.platform})
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={page.error} />
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Post</th>
            <th scope="col">Status</th>
            <th scope="col">Accounts</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.data.map((p) => (
            <tr key={p.id}>
              <td>
                <Link href={`/posts/${p.id}`}>{excerpt(p.content)}</Link>
              </td>
              <td>
                <StatusBadge status={p.status} />
              </td>
              <td class="icons">
                {p.targets.map((t) => (
                  <span key={t.target_post_id} title={`${t.username ?? ""} · ${t.status}`}>
                    <PlatformIcon platform={t.platform ?? "?"} size={20} />
                  </span>
                ))}
              </td>
              <td>{when(postDate(p).toISOString())}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data?.data.length === 0 ? <p class="muted">No posts match.</p> : null}
      <div class="pager">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!page.data?.meta.has_more}
          onClick={() =>
            page.data?.meta.next_after &&
            setCursors([
              ...cursors,
              { after: page.data.meta.next_after, after_id: page.data.meta.next_after_id ?? undefined },
            ])
          }
        >
          Older
        </button>
      </div>
    </>
  );
}
