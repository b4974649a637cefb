import type { Plugin } from "../platform/sdk.ts";

type Described = Pick<Plugin, "platform" | "displayName" | "optionsSchema">;

/** The component schema holding a platform's platform_options: twitter → TwitterOptions. */
export const optionsComponentName = (platform: string) => `${platform[0].toUpperCase()}${platform.slice(1)}Options`;

const schemaRef = (platform: string) => `#/components/schemas/${optionsComponentName(platform)}`;

/** A TypeBox schema as plain JSON Schema (its symbol-keyed bookkeeping left out). */
const plain = (schema: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

/**
 * Puts every plugin's optionsSchema into the OpenAPI description, so the 400 invalid_platform_options
 * hint can send a client there: one component schema per platform, and PostTargetInput.platform_options
 * linking to them. The property itself stays a free object (its keys depend on the target account's
 * platform, which the body does not name): a oneOf over schemas that mostly allow any key would match
 * several at once, which validators refuse and client generators turn into awkward unions. The links are
 * in its description for readers and in `x-platform-options` (platform id → $ref) for tools.
 */
export function describePlatformOptions<T>(doc: T, plugins: Described[]): T {
  const d = doc as { components?: { schemas?: Record<string, unknown> } };
  d.components ??= {};
  d.components.schemas ??= {};
  for (const p of plugins) {
    d.components.schemas[optionsComponentName(p.platform)] = {
      ...plain(p.optionsSchema),
      title: optionsComponentName(p.platform),
      description: `platform_options of a target on a ${p.displayName} account (platform \`${p.platform}\`).`,
    };
  }
  const links = plugins
    .map((p) => `- ${p.platform}: [${optionsComponentName(p.platform)}](${schemaRef(p.platform)})`)
    .join("\n");
  const description =
    "Options for the target account's platform; unknown keys are stored but not sent to the platform, " +
    "except where a platform's schema forbids other keys. The keys each platform accepts:\n" +
    links;
  const mapping = Object.fromEntries(plugins.map((p) => [p.platform, { $ref: schemaRef(p.platform) }]));
  forEachSchema(doc, (schema) => {
    const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
    if (schema.title !== "PostTargetInput" || !props?.platform_options) return;
    props.platform_options.description = description;
    props.platform_options["x-platform-options"] = mapping;
  });
  return doc;
}

function forEachSchema(node: unknown, visit: (schema: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) forEachSchema(item, visit);
  } else if (node && typeof node === "object") {
    visit(node as Record<string, unknown>);
    for (const value of Object.values(node)) forEachSchema(value, visit);
  }
}
