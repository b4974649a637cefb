import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiFailure } from "./api.ts";
import type { JsonSchema } from "./types.ts";
import { ErrorNote } from "./ui.tsx";

type Values = Record<string, unknown>;
type Schema = JsonSchema & { required?: string[]; minProperties?: number };

/** "caption_max_length" → "Caption max length". */
export function fieldLabel(name: string) {
  return name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

function choices(s: JsonSchema): unknown[] | null {
  if (s.enum) return s.enum;
  if (s.anyOf?.length && s.anyOf.every((a) => a.const !== undefined)) return s.anyOf.map((a) => a.const);
  return null;
}

/**
 * The field an API error names: its message starts with the field's path ("body.settings.x.y: …",
 * "target_account_ids[1] (…): …", "body.name must …"). Null when it names none.
 */
export function errorPath(message: string): string | null {
  const m = /^(body\.)?([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+|\[\d+\])*)(:| \(| )/.exec(message);
  if (!m) return null;
  return m[1] || m[3] !== " " ? m[2] : null;
}

/**
 * An API error as shown beside the field it names exactly: the field's path is dropped from the front of
 * the message ("body.x.y must be …" → "Must be …"), since the field itself is right there.
 */
export function besideField(error: ApiFailure, at: string | null): ApiFailure {
  if (!at || errorPath(error.message) !== at) return error;
  const rest = error.message.replace(/^(?:body\.)?\S+?:? /, "");
  const message = rest.charAt(0).toUpperCase() + rest.slice(1);
  return new ApiFailure(error.status, error.code, message, error.hint);
}

/** Of the paths a form shows, the deepest one the error's path lies in (so the error sits beside it). */
export function placeError(path: string | null, shown: string[]): string | null {
  if (!path) return null;
  let best: string | null = null;
  for (const p of shown) {
    const inside = path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`);
    if (inside && (!best || p.length > best.length)) best = p;
  }
  return best;
}

/** Every path a schema's fields have under `prefix`, for placeError. */
export function schemaPaths(schema: JsonSchema, prefix: string, skip: (name: string) => boolean = () => false) {
  const out: string[] = [prefix];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if (skip(name)) continue;
    if (s.type === "object" && s.properties) out.push(...schemaPaths(s, `${prefix}.${name}`));
    else out.push(`${prefix}.${name}`);
  }
  return out;
}

/** The error belonging to the field at `path`, if the form placed it there. */
export interface FieldError {
  at: string | null;
  error: unknown;
}
const errorFor = (e: FieldError | undefined, path: string) => (e && e.at === path ? e.error : null);
const errorId = (id: string) => `${id}-error`;

/**
 * A list of words (hashtags) typed separated by commas or spaces. The text as typed is kept here, so a
 * separator just typed is not taken away by turning the text into the list and back.
 */
function ListInput(props: {
  id: string;
  value: string[];
  onChange: (v: string[]) => void;
  a11y: Record<string, unknown>;
}) {
  const [raw, setRaw] = useState(props.value.join(", "));
  return (
    <input
      id={props.id}
      value={raw}
      onInput={(e) => {
        const text = (e.target as HTMLInputElement).value;
        setRaw(text);
        props.onChange(text.split(/[,\s]+/).filter(Boolean));
      }}
      {...props.a11y}
    />
  );
}

/** One field: its label, control, description and the API's error beside it. */
function Field(props: { id: string; path: string; error?: FieldError; check?: boolean; children: ComponentChildren }) {
  const err = errorFor(props.error, props.path);
  return (
    <div class={`field${props.check ? " check" : ""}${err ? " invalid" : ""}`} data-path={props.path}>
      {props.children}
      {err ? <ErrorNote error={err} id={errorId(props.id)} /> : null}
    </div>
  );
}

/**
 * Fields generated from a JSON Schema object (a TypeBox declaration): booleans are checkboxes showing the
 * value or its default, enumerations selects, lists of choices checkbox groups, lists of strings a text
 * input (separated by commas or spaces), nested objects fieldsets. An emptied field is removed, so the
 * API's default applies; an object left empty is removed too.
 */
export function SchemaFields(props: {
  schema: Schema;
  values: Values;
  /**
   * Given an update of the values rather than new values: two changes of one user action (a field's
   * change on blur, then a click elsewhere) come before a render, and each must see the other.
   */
  onChange: (update: (old: Values) => Values) => void;
  idPrefix: string;
  path: string;
  error?: FieldError;
  /** Properties not to show (another platform's block). */
  skip?: (name: string) => boolean;
}) {
  const set = (name: string, value: unknown) => update(name, () => value);
  const update = (name: string, change: (old: unknown) => unknown) =>
    props.onChange((old) => {
      const next = { ...old };
      const value = change(old[name]);
      const empty =
        value === undefined ||
        (Array.isArray(value) && !value.length) ||
        value === "" ||
        (typeof value === "object" && value !== null && !Array.isArray(value) && !Object.keys(value).length);
      if (empty) delete next[name];
      else next[name] = value;
      return next;
    });
  return (
    <>
      {Object.entries(props.schema.properties ?? {})
        .filter(([name]) => !props.skip?.(name))
        .map(([name, s]) => {
          const id = `${props.idPrefix}-${name}`;
          const path = `${props.path}.${name}`;
          const value = props.values[name];
          const required = props.schema.required?.includes(name);
          const err = errorFor(props.error, path);
          const described = [s.description ? `${id}-help` : "", err ? errorId(id) : ""].filter(Boolean).join(" ");
          const a11y = { "aria-describedby": described || undefined, "aria-invalid": err ? true : undefined };
          const help = s.description ? (
            <small class="muted" id={`${id}-help`}>
              {s.description}
            </small>
          ) : null;
          const list = choices(s);
          if (s.type === "object") {
            return (
              <fieldset key={name} data-path={path} aria-describedby={a11y["aria-describedby"]}>
                <legend>{fieldLabel(name)}</legend>
                {help}
                <SchemaFields
                  schema={s as Schema}
                  values={(value as Values) ?? {}}
                  onChange={(f) => update(name, (old) => f((old as Values) ?? {}))}
                  idPrefix={id}
                  path={path}
                  error={props.error}
                />
                {err ? <ErrorNote error={err} id={errorId(id)} /> : null}
              </fieldset>
            );
          }
          if (s.type === "boolean") {
            return (
              <Field key={name} id={id} path={path} error={props.error} check>
                <label class="check" for={id}>
                  <input
                    id={id}
                    type="checkbox"
                    checked={((value ?? s.default) as boolean | undefined) === true}
                    onChange={(e) => set(name, (e.target as HTMLInputElement).checked)}
                    {...a11y}
                  />
                  {fieldLabel(name)}
                </label>
                {help}
              </Field>
            );
          }
          if (s.type === "array" && s.items && choices(s.items)) {
            const picked = (value as unknown[] | undefined) ?? [];
            return (
              <Field key={name} id={id} path={path} error={props.error}>
                <fieldset class="choice-group" aria-describedby={a11y["aria-describedby"]}>
                  <legend>
                    {fieldLabel(name)}
                    {required ? " (required)" : ""}
                  </legend>
                  {choices(s.items)!.map((c) => (
                    <label class="check" key={String(c)}>
                      <input
                        type="checkbox"
                        checked={picked.includes(c)}
                        onChange={(e) =>
                          update(name, (old) => {
                            const was = ((old as unknown[] | undefined) ?? []).filter((p) => p !== c);
                            return (e.target as HTMLInputElement).checked ? [...was, c] : was;
                          })
                        }
                      />
                      {String(c).replace(/_/g, " ")}
                    </label>
                  ))}
                </fieldset>
                {help}
              </Field>
            );
          }
          const numeric = s.type === "integer" || s.type === "number";
          const text = String(value ?? "");
          const read = (raw: string) => (numeric ? (raw === "" ? "" : Number(raw)) : raw);
          return (
            <Field key={name} id={id} path={path} error={props.error}>
              <label for={id}>
                {fieldLabel(name)}
                {required ? " (required)" : ""}
              </label>
              {list ? (
                <select
                  id={id}
                  value={String(value ?? s.default ?? "")}
                  onChange={(e) => set(name, (e.target as HTMLSelectElement).value)}
                  {...a11y}
                >
                  {s.default === undefined ? <option value="">—</option> : null}
                  {list.map((v) => (
                    <option key={String(v)} value={String(v)}>
                      {String(v)}
                    </option>
                  ))}
                </select>
              ) : (s.maxLength ?? 0) > 200 ? (
                <textarea
                  id={id}
                  rows={2}
                  maxLength={s.maxLength}
                  value={text}
                  onInput={(e) => set(name, read((e.target as HTMLTextAreaElement).value))}
                  {...a11y}
                />
              ) : s.type === "array" ? (
                <ListInput
                  id={id}
                  value={(value as string[] | undefined) ?? []}
                  onChange={(v) => set(name, v)}
                  a11y={a11y}
                />
              ) : (
                <input
                  id={id}
                  type={numeric ? "number" : "text"}
                  min={s.minimum}
                  max={s.maximum}
                  placeholder={s.default !== undefined && !Array.isArray(s.default) ? String(s.default) : undefined}
                  value={text}
                  onInput={(e) => set(name, read((e.target as HTMLInputElement).value))}
                  {...a11y}
                />
              )}
              {help}
            </Field>
          );
        })}
    </>
  );
}
