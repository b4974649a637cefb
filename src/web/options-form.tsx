import type { JsonSchema } from "./types.ts";

type Values = Record<string, unknown>;

function choices(s: JsonSchema): unknown[] | null {
  if (s.enum) return s.enum;
  if (s.anyOf?.every((a) => a.const !== undefined)) return s.anyOf.map((a) => a.const);
  return null;
}

function label(name: string) {
  return name
    .replace(/_/g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/^./, (c) => c.toUpperCase());
}

/**
 * A form for a plugin's platform_options, generated from its TypeBox (JSON Schema) declaration: booleans
 * are checkboxes, enumerations selects, strings and numbers inputs. Fields left empty are not sent, so the
 * platform's defaults apply; nested objects and lists are left to the API.
 */
export function OptionsForm(props: {
  idPrefix: string;
  schema: JsonSchema & { required?: string[] };
  values: Values;
  onChange: (values: Values) => void;
}) {
  const entries = Object.entries(props.schema.properties ?? {}).filter(
    ([, s]) => s.type !== "object" && s.type !== "array",
  );
  if (entries.length === 0) return <p class="muted small">This platform takes no options.</p>;
  const set = (name: string, value: unknown) => {
    const next = { ...props.values };
    if (value === "" || value === undefined) delete next[name];
    else next[name] = value;
    props.onChange(next);
  };
  return (
    <div class="options-form">
      {entries.map(([name, s]) => {
        const id = `${props.idPrefix}-${name}`;
        const required = props.schema.required?.includes(name);
        const help = s.description ? <small class="muted">{s.description}</small> : null;
        const list = choices(s);
        if (s.type === "boolean")
          return (
            <div class="field check" key={name}>
              <input
                id={id}
                type="checkbox"
                checked={props.values[name] === true}
                onChange={(e) => set(name, (e.target as HTMLInputElement).checked || undefined)}
              />
              <label for={id}>{label(name)}</label>
              {help}
            </div>
          );
        return (
          <div class="field" key={name}>
            <label for={id}>
              {label(name)}
              {required ? " (required)" : ""}
            </label>
            {list ? (
              <select
                id={id}
                value={String(props.values[name] ?? "")}
                onChange={(e) => set(name, (e.target as HTMLSelectElement).value)}
              >
                <option value="">{s.default !== undefined ? `Default (${String(s.default)})` : "—"}</option>
                {list.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                type={s.type === "integer" || s.type === "number" ? "number" : "text"}
                required={required}
                maxLength={s.maxLength}
                min={s.minimum}
                max={s.maximum}
                value={String(props.values[name] ?? "")}
                onInput={(e) => {
                  const raw = (e.target as HTMLInputElement).value;
                  set(name, s.type === "integer" || s.type === "number" ? (raw === "" ? "" : Number(raw)) : raw);
                }}
              />
            )}
            {help}
          </div>
        );
      })}
    </div>
  );
}
