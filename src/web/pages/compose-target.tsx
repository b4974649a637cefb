import { countText, utf8Length } from "../../platform/text.ts";
import { ApiFailure } from "../api.ts";
import { OptionsForm } from "../options-form.tsx";
import type { Account, PlatformInfo, PostValidation } from "../types.ts";
import { ErrorNote, PlatformIcon } from "../ui.tsx";
import { ProblemList } from "../validation.tsx";

export interface TargetState {
  override: string;
  options: Record<string, unknown>;
  /** Extension: the first comment, posted by the account right after the post. */
  firstComment: string;
}

export const emptyTarget = (): TargetState => ({ override: "", options: {}, firstComment: "" });

const UNIT_NAMES: Record<string, string> = {
  characters: "characters",
  utf16: "UTF-16 units",
  graphemes: "characters",
  bytes: "bytes",
  weighted: "weighted characters",
};

/**
 * One account in Compose's "Publish to" list: its checkbox, the text count as its platform counts it, the
 * problems validate found for it, and (once picked) what can be customised for it alone.
 */
export function TargetItem(props: {
  account: Account;
  platform: PlatformInfo | undefined;
  on: boolean;
  state: TargetState;
  content: string;
  hasMedia: boolean;
  checked: PostValidation["targets"][number] | undefined;
  /** The validate answer is for the body as it is now (its counts can replace the local ones). */
  current: boolean;
  error: unknown;
  onToggle: (on: boolean) => void;
  onChange: (state: TargetState) => void;
}) {
  const { account: a, platform: p, on, state: t, checked: v } = props;
  const text = t.override.trim() ? t.override : props.content;
  // The server's count once it has seen this very text; until then, the same rule counted here.
  const server = props.current ? v?.text : null;
  const unit = server?.unit ?? p?.text_limit.unit;
  const limit = server ? server.limit : p ? (props.hasMedia && p.text_limit.withMediaMax) || p.text_limit.max : null;
  const used = server ? server.length : p ? countText(text, p.text_limit.unit) : text.length;
  const bytesOver = p?.text_limit.maxBytes ? utf8Length(text) > p.text_limit.maxBytes : false;
  const over = (limit !== null && used > limit) || (!server && bytesOver);
  const comment = a.media_requirements?.first_comment ?? null;
  return (
    <li class={`target${on ? " on" : ""}`} data-target={a.username}>
      <div class="row">
        <input
          id={`t-${a.id}`}
          type="checkbox"
          checked={on}
          onChange={(e) => props.onToggle((e.target as HTMLInputElement).checked)}
        />
        <label for={`t-${a.id}`} class="row">
          <PlatformIcon platform={a.platform} size={24} />
          <span>
            {a.username} <span class="muted small">{p?.display_name ?? a.platform}</span>
          </span>
        </label>
        {limit !== null ? (
          <span class={`count${over ? " over" : ""}`} aria-live="polite">
            {used} / {limit}
            <span class="visually-hidden"> {UNIT_NAMES[unit!] ?? unit}</span>
          </span>
        ) : null}
      </div>
      {v ? (
        <ProblemList
          // The refused create's own error, shown below, says the same: not twice.
          problems={v.problems.filter((x) => x.code !== (props.error as ApiFailure | undefined)?.code)}
          label={`Problems for ${a.username}`}
        />
      ) : null}
      {props.error ? <ErrorNote error={props.error} /> : null}
      {on ? (
        <details open={!!t.firstComment || undefined}>
          <summary>Customise for {a.username}</summary>
          <label for={`o-${a.id}`}>Text for this account only</label>
          <textarea
            id={`o-${a.id}`}
            rows={3}
            value={t.override}
            placeholder="Leave empty to use the main text"
            onInput={(e) => props.onChange({ ...t, override: (e.target as HTMLTextAreaElement).value })}
          />
          {comment ? (
            <>
              <label for={`fc-${a.id}`}>
                First comment{" "}
                <span class="muted small">
                  ({comment.kind === "reply" ? "a reply to the post" : "a comment under the post"}, up to{" "}
                  {comment.max_length} {UNIT_NAMES[comment.unit] ?? comment.unit})
                </span>
              </label>
              <textarea
                id={`fc-${a.id}`}
                rows={2}
                value={t.firstComment}
                placeholder="Posted by this account right after the post: links, hashtags, credits"
                onInput={(e) => props.onChange({ ...t, firstComment: (e.target as HTMLTextAreaElement).value })}
              />
            </>
          ) : null}
          {p ? (
            <OptionsForm
              idPrefix={`opt-${a.id}`}
              schema={p.options_schema}
              values={t.options}
              onChange={(options) => props.onChange({ ...t, options })}
            />
          ) : null}
        </details>
      ) : null}
    </li>
  );
}
