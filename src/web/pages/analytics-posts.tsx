import { useState } from "preact/hooks";
import { count, postRow, rate, times, type AnalyticsPost, type PostRow } from "../analytics-data.ts";
import { Link } from "../router.tsx";
import { PlatformIcon, when } from "../ui.tsx";

type Column = "title" | "platforms" | "views" | "engagement" | "vsMedian";

const COLUMNS: { key: Column; label: string; numeric?: boolean }[] = [
  { key: "title", label: "Post" },
  { key: "platforms", label: "Platforms" },
  { key: "views", label: "Views", numeric: true },
  { key: "engagement", label: "Engagement rate", numeric: true },
  { key: "vsMedian", label: "Views vs median", numeric: true },
];

const platformsOf = (r: PostRow) => [...new Set(r.post.destinations.map((d) => d.platform))].sort().join(",");

const valueOf = (r: PostRow, key: Column): string | number | null =>
  key === "title" ? r.post.title.toLocaleLowerCase() : key === "platforms" ? platformsOf(r) : r[key];

/** Sorted by the column; posts without the number always last, whichever way (they are not 0). */
function sorted(rows: PostRow[], key: Column, dir: "ascending" | "descending"): PostRow[] {
  const sign = dir === "ascending" ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = valueOf(a, key);
    const y = valueOf(b, key);
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sign * (typeof x === "number" ? x - (y as number) : x.localeCompare(y as string));
  });
}

/** The posts of the range, sortable by each column (a button in each header; aria-sort says the order). */
export function PostsTable({ posts }: { posts: AnalyticsPost[] }) {
  const [sort, setSort] = useState<{ key: Column | null; dir: "ascending" | "descending" }>({
    key: null,
    dir: "descending",
  });
  const rows = posts.map(postRow);
  const shown = sort.key ? sorted(rows, sort.key, sort.dir) : rows;
  const sortBy = (key: Column, numeric?: boolean) =>
    setSort((s) =>
      s.key === key
        ? { key, dir: s.dir === "ascending" ? "descending" : "ascending" }
        : { key, dir: numeric ? "descending" : "ascending" },
    );
  return (
    <div class="table-scroll" role="region" aria-labelledby="posts-h" tabIndex={0}>
      <table class="analytics-posts">
        <caption class="visually-hidden">
          Posts of the range
          {sort.key ? `, sorted by ${COLUMNS.find((c) => c.key === sort.key)?.label} ${sort.dir}` : ", newest first"}
        </caption>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                scope="col"
                class={c.numeric ? "num" : ""}
                aria-sort={sort.key === c.key ? sort.dir : undefined}
              >
                <button type="button" class="sort" onClick={() => sortBy(c.key, c.numeric)}>
                  {c.label}
                  <span aria-hidden="true" class="arrow">
                    {sort.key === c.key ? (sort.dir === "ascending" ? "▲" : "▼") : "↕"}
                  </span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <PostLine key={r.post.id} row={r} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PostLine({ row: r }: { row: PostRow }) {
  const p = r.post;
  const title = p.title || "(no text)";
  const external = p.destinations.find((d) => d.url)?.url;
  return (
    <tr data-post={p.post_id ?? p.id}>
      <td>
        <div class="post-cell">
          {p.thumbnail_url ? (
            <img class="thumb" src={p.thumbnail_url} alt="" width={48} height={48} loading="lazy" />
          ) : (
            <span class="thumb none" aria-hidden="true" />
          )}
          <span>
            {p.post_id ? (
              <Link href={`/posts/${p.post_id}`}>{title}</Link>
            ) : external ? (
              <a href={external} target="_blank" rel="noopener noreferrer">
                {title} <span class="visually-hidden">(on the platform, made there)</span>
              </a>
            ) : (
              title
            )}
            <span class="small muted block">
              {when(p.published_at)}
              {p.origin === "native" ? " · made on the platform" : ""}
            </span>
          </span>
        </div>
      </td>
      <td class="icons">
        {[...p.destinations]
          .sort((a, b) => a.platform.localeCompare(b.platform))
          .map((d) => (
            <span key={d.account_id + d.published_at} title={`${d.platform}: ${d.username ?? ""}`}>
              <PlatformIcon platform={d.platform} size={20} />
              <span class="visually-hidden">{d.platform}</span>
            </span>
          ))}
      </td>
      <td class="num">{count(r.views)}</td>
      <td class="num">{rate(r.engagement)}</td>
      <td class="num">{times(r.vsMedian)}</td>
    </tr>
  );
}
