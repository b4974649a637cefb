import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, putWithProgress } from "../api.ts";
import { timeZone } from "../dates.ts";
import { buildRule, noRepeat, type RepeatChoice } from "../repeat-rule.ts";
import { navigate } from "../router.tsx";
import type { Account, Draft, Media, PlatformInfo, Post, UploadTicket } from "../types.ts";
import { ErrorNote, PageTitle, useLoad } from "../ui.tsx";
import { ProblemList, refusal, useValidation, withoutTargetPrefix } from "../validation.tsx";
import { emptyTarget, TargetItem, type TargetState } from "./compose-target.tsx";
import { WhenPanel, type Submit } from "./compose-when.tsx";
import { LibraryPicker } from "./compose-library.tsx";

interface MediaSlot {
  key: string;
  name: string;
  preview: string;
  kind: "image" | "video";
  progress: number;
  url?: string;
  error?: unknown;
}

/** Uploads one file through the ticket flow: ask for a ticket, PUT the bytes to it, read the stored media. */
async function upload(file: File, onProgress: (f: number) => void): Promise<string> {
  const ticket = await api<{ data: UploadTicket }>("POST", "/v1/media/uploads", {
    filename: file.name,
    content_type: file.type || "application/octet-stream",
  });
  await putWithProgress(ticket.data.upload.signedUrl, file, ticket.data.content_type, onProgress);
  const media = await api<{ data: Media }>("GET", `/v1/media/${encodeURIComponent(ticket.data.media_id)}`);
  return media.data.public_url;
}

export function ComposePage({ params }: { params: Record<string, string> }) {
  const draftId = params.id;
  const accounts = useLoad(() => api<{ data: Account[] }>("GET", "/v1/accounts").then((r) => r.data));
  const platforms = useLoad(() => api<{ data: PlatformInfo[] }>("GET", "/auth/platforms").then((r) => r.data));
  const [draft, setDraft] = useState<Draft | null>(null);
  const [content, setContent] = useState("");
  const [media, setMedia] = useState<MediaSlot[]>([]);
  const [selected, setSelected] = useState<string[]>([]);
  const [targets, setTargets] = useState<Record<string, TargetState>>({});
  const [publishAt, setPublishAt] = useState("");
  const [repeat, setRepeat] = useState<RepeatChoice>(noRepeat());
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [targetErrors, setTargetErrors] = useState<Record<string, unknown>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!draftId) return;
    api<{ data: Draft }>("GET", `/v1/drafts/${draftId}`).then((r) => {
      setDraft(r.data);
      setContent(r.data.content);
      setSelected(r.data.selected_account_ids);
      setMedia(
        r.data.media.map((m, i) => ({
          key: `d${i}`,
          name: m.url.split("/").pop() ?? "media",
          preview: m.url,
          kind: m.type === "video" ? "video" : "image",
          progress: 1,
          url: m.url,
        })),
      );
    }, setError);
  }, [draftId]);

  const active = (accounts.data ?? []).filter((a) => a.status === "active");
  const platformOf = (a: Account) => platforms.data?.find((p) => p.platform === a.platform);

  const addFiles = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      const key = crypto.randomUUID();
      const slot: MediaSlot = {
        key,
        name: file.name,
        preview: URL.createObjectURL(file),
        kind: file.type.startsWith("video/") ? "video" : "image",
        progress: 0,
      };
      const patch = (p: Partial<MediaSlot>) =>
        setMedia((list) => list.map((m) => (m.key === key ? { ...m, ...p } : m)));
      setMedia((list) => [...list, slot]);
      upload(file, (progress) => patch({ progress })).then(
        (url) => patch({ url, progress: 1 }),
        (e) => patch({ error: e }),
      );
    }
  };

  const toggle = (id: string, on: boolean) => {
    setSelected((s) => (on ? [...s, id] : s.filter((x) => x !== id)));
    setTargets((t) => (t[id] ? t : { ...t, [id]: emptyTarget() }));
  };

  const body = (when: Submit) => {
    const list = selected.filter((id) => active.some((a) => a.id === id));
    // Weekly without picked days repeats on the first post's weekday (the server's rule).
    const rule = when === "queue" ? null : buildRule(repeat);
    return {
      content,
      media: media.filter((m) => m.url).map((m) => ({ url: m.url!, type: m.kind })),
      ...(when === "schedule" && publishAt ? { publish_at: new Date(publishAt).toISOString() } : {}),
      // A series starts at publish_at; "now" starts it at this moment.
      ...(when === "now" && rule ? { publish_at: new Date().toISOString() } : {}),
      ...(when === "queue" ? { queue: true } : {}),
      ...(rule ? { repeat: { rule: rule, time_zone: timeZone() } } : {}),
      targets: list.map((id) => {
        const t = targets[id];
        return {
          account_id: id,
          ...(t?.override.trim() ? { content_override: t.override } : {}),
          ...(t && Object.keys(t.options).length ? { platform_options: t.options } : {}),
          ...(t?.firstComment.trim() ? { first_comment: t.firstComment } : {}),
        };
      }),
      ...(draftId ? { draft_id: draftId } : {}),
    };
  };

  /** The API names a target as "targets[2] (…)": put its error beside that target. */
  const showError = (e: unknown, sent: { account_id: string }[]) => {
    const index = e instanceof ApiFailure ? /targets\[(\d+)\]/.exec(e.message)?.[1] : undefined;
    const target = index !== undefined ? sent[Number(index)] : undefined;
    // Beside the target, the part of the message that names the target (index, account id) says nothing more.
    if (target && e instanceof ApiFailure)
      setTargetErrors({
        [target.account_id]: new ApiFailure(e.status, e.code, withoutTargetPrefix(e.message), e.hint),
      });
    else setError(e);
  };

  const uploading = media.some((m) => !m.url && !m.error);

  // Checked as it would be sent: with publish_at once a date is picked, since Schedule would send it.
  const validation = useValidation(body(publishAt ? "schedule" : "now"));
  const checked = validation.result?.data;
  const postProblems = checked?.problems ?? refusal(validation.result?.error);
  const isWhen = (field: string) => /^(publish_at|repeat|queue)/.test(field);
  const whenProblems = postProblems.filter((p) => isWhen(p.field));
  const contentProblems = postProblems.filter((p) => !isWhen(p.field));
  // A refused create's error beside a target stands until the user edits again: then the live check takes over.
  useEffect(() => setTargetErrors({}), [validation.result]);

  const submit = async (when: Submit) => {
    setError(null);
    setTargetErrors({});
    if (when === "schedule" && !publishAt) {
      setError(new Error("Pick a date and time to schedule."));
      return;
    }
    const sent = body(when);
    setBusy(when);
    try {
      const r = await api<{ data: Post }>("POST", "/v1/posts", sent);
      navigate(`/posts/${r.data.id}`);
    } catch (e) {
      showError(e, sent.targets);
    } finally {
      setBusy(null);
    }
  };

  const saveDraft = async () => {
    setError(null);
    setBusy("draft");
    const fields = {
      content,
      media: media.filter((m) => m.url).map((m) => ({ url: m.url!, type: m.kind })),
      selected_account_ids: selected,
    };
    try {
      const r = draft
        ? await api<{ data: Draft }>("PATCH", `/v1/drafts/${draft.id}`, {
            ...fields,
            expected_updated_at: draft.updated_at,
          })
        : await api<{ data: Draft }>("POST", "/v1/drafts", fields);
      setDraft(r.data);
      setSaved(`Draft saved at ${new Date().toLocaleTimeString()}.`);
      if (!draftId) navigate(`/drafts/${r.data.id}`, true);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  // Not the form before the draft is there: its loaded text would replace whatever was typed meanwhile.
  if (draftId && !draft)
    return (
      <>
        <PageTitle>Edit draft</PageTitle>
        {error ? <ErrorNote error={error} /> : <p class="boot">Loading the draft…</p>}
      </>
    );

  return (
    <>
      <PageTitle>{draftId ? "Edit draft" : "Compose"}</PageTitle>
      <ErrorNote error={accounts.error ?? platforms.error} />
      <form class="compose" onSubmit={(e) => e.preventDefault()}>
        <section class="panel">
          <label for="content">Text</label>
          <textarea
            id="content"
            rows={7}
            value={content}
            onInput={(e) => setContent((e.target as HTMLTextAreaElement).value)}
            placeholder="What do you want to say?"
          />
          <div
            class={`dropzone${dragging ? " over" : ""}`}
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              addFiles(e.dataTransfer?.files ?? null);
            }}
          >
            <p>
              Drop images or videos here, or{" "}
              <button type="button" class="link" onClick={() => fileInput.current?.click()}>
                choose files
              </button>
              .
            </p>
            <LibraryPicker
              onPick={(m) =>
                setMedia((list) => [
                  ...list,
                  {
                    key: crypto.randomUUID(),
                    name: m.filename ?? m.id,
                    preview: m.public_url,
                    kind: m.content_type.startsWith("video/") ? "video" : "image",
                    progress: 1,
                    url: m.public_url,
                  },
                ])
              }
            />
            <input
              ref={fileInput}
              id="media-input"
              type="file"
              accept="image/*,video/*"
              multiple
              class="visually-hidden"
              aria-label="Add media"
              onChange={(e) => {
                addFiles((e.target as HTMLInputElement).files);
                (e.target as HTMLInputElement).value = "";
              }}
            />
          </div>
          {media.length ? (
            <ul class="media-list" aria-label="Media">
              {media.map((m) => (
                <li key={m.key} class="media-item">
                  {m.kind === "video" ? <video src={m.preview} muted /> : <img src={m.preview} alt={m.name} />}
                  <progress max={1} value={m.progress} aria-label={`Uploading ${m.name}`} />
                  <span class="small">
                    {m.error ? "failed" : m.url ? "uploaded" : `${Math.round(m.progress * 100)} %`}
                  </span>
                  <button
                    type="button"
                    class="link"
                    onClick={() => setMedia((list) => list.filter((x) => x.key !== m.key))}
                    aria-label={`Remove ${m.name}`}
                  >
                    Remove
                  </button>
                  <ErrorNote error={m.error} />
                </li>
              ))}
            </ul>
          ) : null}
          <ProblemList problems={contentProblems} label="Problems with the post" />
        </section>

        <section class="panel" aria-labelledby="targets-title">
          <h2 id="targets-title">Publish to</h2>
          {accounts.data && active.length === 0 ? (
            <p class="muted">No active account: connect one on the Accounts page.</p>
          ) : null}
          <ul class="targets">
            {active.map((a) => (
              <TargetItem
                key={a.id}
                account={a}
                platform={platformOf(a)}
                on={selected.includes(a.id)}
                state={targets[a.id] ?? emptyTarget()}
                content={content}
                hasMedia={media.length > 0}
                checked={selected.includes(a.id) ? checked?.targets.find((x) => x.account_id === a.id) : undefined}
                current={validation.current}
                error={targetErrors[a.id]}
                onToggle={(on) => toggle(a.id, on)}
                onChange={(state) => setTargets({ ...targets, [a.id]: state })}
              />
            ))}
          </ul>
        </section>

        <WhenPanel
          publishAt={publishAt}
          onPublishAt={setPublishAt}
          repeat={repeat}
          onRepeat={setRepeat}
          problems={whenProblems}
          error={error}
          saved={saved}
          busy={busy}
          uploading={uploading}
          onSubmit={(when) => void submit(when)}
          onSaveDraft={() => void saveDraft()}
        />
      </form>
    </>
  );
}
