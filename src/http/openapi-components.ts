type Node = Record<string, unknown>;

export const schemaRef = (name: string) => `#/components/schemas/${name}`;

/**
 * Names every titled schema once: a schema with a `title` (the models give each shared shape one, e.g.
 * Post, Draft, Error) moves to components.schemas under that title and every place it appeared gets a
 * $ref, so client generators produce named types. Two different schemas with one title are a bug in the
 * models, reported here rather than served as a description that lies about one of them.
 */
export function hoistNamedSchemas(doc: Node): void {
  const components = ((doc.components ??= {}) as Node).schemas as Node | undefined;
  const schemas: Node = components ?? {};
  (doc.components as Node).schemas = schemas;
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (!node || typeof node !== "object") return node;
    const out: Node = {};
    for (const [key, value] of Object.entries(node)) {
      // Examples and extension values are data, not schemas: their `title` keys are not names.
      out[key] = key === "example" || key === "examples" || key.startsWith("x-") ? value : hoist(value);
    }
    simplifyUnion(out);
    const name = out.title;
    if (typeof name !== "string" || !isSchema(out)) return out;
    delete out.$id;
    const existing = schemas[name];
    if (existing === undefined) schemas[name] = out;
    else if (withoutDescriptions(existing) !== withoutDescriptions(out)) {
      throw new Error(`OpenAPI: two different schemas are titled ${name}; give one of them another title`);
    } else if (JSON.stringify(out).length > JSON.stringify(existing).length) {
      // The generator drops some descriptions where it merges schemas: keep the fuller copy.
      schemas[name] = out;
    }
    return { $ref: schemaRef(name) };
  };
  doc.paths = hoist(doc.paths);
  for (const [name, schema] of Object.entries({ ...schemas })) {
    // A component's own title names it already; only what it contains is hoisted.
    const { title, ...rest } = schema as Node;
    schemas[name] = { title, ...(hoist(rest) as Node) };
  }
  (doc.components as Node).schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The generator writes one TypeBox union two ways depending on where it appears (an `enum`, or an
 * `anyOf` of `const`s; `type: [string, null]` or an `anyOf` of types). One spelling, the compact one,
 * keeps a shared schema identical wherever it is used.
 */
function simplifyUnion(node: Node): void {
  const options = node.anyOf as Node[] | undefined;
  if (!Array.isArray(options) || options.length < 2) return;
  const only = (o: Node, keys: string[]) => Object.keys(o).every((k) => keys.includes(k));
  const types = new Set(options.map((o) => o.type));
  if (types.size === 1 && options.every((o) => o.const !== undefined && only(o, ["const", "type"]))) {
    delete node.anyOf;
    node.type = options[0].type;
    node.enum = options.map((o) => o.const);
  } else if (options.every((o) => typeof o.type === "string" && only(o, ["type"]))) {
    delete node.anyOf;
    node.type = options.map((o) => o.type);
  }
}

const withoutDescriptions = (node: unknown) =>
  JSON.stringify(node, (key, value) => (key === "description" ? undefined : value));

const isSchema = (node: Node) =>
  "type" in node || "anyOf" in node || "oneOf" in node || "allOf" in node || "properties" in node;
