import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { Link } from "../router.tsx";
import type { Account, Problem } from "../types.ts";
import { ErrorNote, PageTitle, useLoad } from "../ui.tsx";
import { withoutTargetPrefix } from "../validation.tsx";

/** The answer of POST /v1/posts/bulk, per row of the file. */
interface BulkRow {
  row: number;
  ok: boolean;
  post_id?: string;
  status?: string;
  /** Imported before (the same row of the same file): nothing new was created. */
  replayed?: boolean;
  problems: (Problem & { column?: string })[];
}
interface BulkResult {
  dry_run: boolean;
  total: number;
  ok: number;
  failed: number;
  created: number;
  replayed: number;
  rows: BulkRow[];
}

const COLUMNS = "content,publish_at,account_ids,media_urls,options";

/** A file to start from: the header row and one example row with the profile's first account. */
function templateHref(accounts: Account[]) {
  const id = accounts.find((a) => a.status === "active")?.id ?? "ACCOUNT_ID";
  const when = new Date(Date.now() + 86_400_000).toISOString();
  const csv = `${COLUMNS}\n"Hello from a CSV import",${when},${id},,\n`;
  return `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`;
}

/** The same file gets the same key: importing it twice creates each post once. */
async function keyOf(text: string) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return `import-${Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export function ImportPage() {
  const accounts = useLoad(() => api<{ data: Account[] }>("GET", "/v1/accounts").then((r) => r.data));
  const [file, setFile] = useState<{ name: string; text: string } | null>(null);
  const [result, setResult] = useState<BulkResult | null>(null);
  const [busy, setBusy] = useState<"check" | "import" | null>(null);
  const [error, setError] = useState<unknown>(null);

  const send = async (dryRun: boolean) => {
    if (!file) return;
    setError(null);
    setBusy(dryRun ? "check" : "import");
    try {
      const r = await api<{ data: BulkResult }>("POST", `/v1/posts/bulk${dryRun ? "?dry_run=true" : ""}`, file.text, {
        contentType: "text/csv",
        headers: dryRun ? {} : { "idempotency-key": await keyOf(file.text) },
      });
      setResult(r.data);
    } catch (e) {
      setResult(null);
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  const checkedOk = result?.dry_run && result.failed === 0 && result.total > 0;
  return (
    <>
      <PageTitle>Import posts</PageTitle>
      <section class="panel">
        <p>
          Schedule many posts at once from a CSV file with a header row: <code>{COLUMNS}</code> (also <code>queue</code>
          , <code>external_id</code> and <code>first_comment</code>). Account ids and media URLs are separated by
          spaces; <code>options</code> is JSON keyed by account id. Check the file first: nothing is created until you
          import it, and importing the same file again creates nothing twice.
        </p>
        {accounts.data ? (
          <p>
            <a href={templateHref(accounts.data)} download="crier-import.csv">
              Download a template
            </a>
          </p>
        ) : null}
        <label for="import-file">CSV file</label>
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          onChange={async (e) => {
            const f = (e.target as HTMLInputElement).files?.[0];
            setResult(null);
            setError(null);
            setFile(f ? { name: f.name, text: await f.text() } : null);
          }}
        />
        <div class="actions">
          <button type="button" disabled={!file || !!busy} onClick={() => void send(true)}>
            {busy === "check" ? "Checking…" : "Check the file"}
          </button>
          <button type="button" class="primary" disabled={!checkedOk || !!busy} onClick={() => void send(false)}>
            {busy === "import" ? "Importing…" : checkedOk ? `Import ${result.total} posts` : "Import"}
          </button>
        </div>
        <ErrorNote error={error} />
      </section>
      {result ? <Report result={result} /> : null}
    </>
  );
}

function Report({ result }: { result: BulkResult }) {
  return (
    <section class="panel" aria-labelledby="import-report">
      <h2 id="import-report">{result.dry_run ? "Check" : "Import"}</h2>
      <p role="status">
        {result.total} rows: {result.dry_run ? `${result.ok} ready` : `${result.created} created`}
        {result.replayed ? `, ${result.replayed} already imported` : ""}, {result.failed} with problems.
        {result.dry_run && result.failed ? " Fix the rows below and check again." : ""}
      </p>
      <table class="list report">
        <thead>
          <tr>
            <th scope="col">Row (as in a spreadsheet)</th>
            <th scope="col">Result</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {result.rows.map((r) => (
            <tr key={r.row} class={r.ok ? "" : "bad"} data-row={r.row}>
              <td>{r.row}</td>
              <td>{!r.ok ? "problem" : r.replayed ? "already imported" : result.dry_run ? "ready" : "created"}</td>
              <td>
                {r.post_id ? <Link href={`/posts/${r.post_id}`}>Open the post</Link> : null}
                {r.problems.length ? (
                  <ul class="problems">
                    {r.problems.map((p, i) => (
                      <li key={i} class="problem" data-code={p.code}>
                        <strong>
                          {p.column ? `${p.column}: ` : ""}
                          {withoutTargetPrefix(p.message)}
                        </strong>
                        {p.hint ? <span class="hint">{p.hint}</span> : null}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
