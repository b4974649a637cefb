import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pluginFolders, renderPluginIndex } from "../../scripts/plugin-index.ts";
import { PLUGINS } from "../../plugins/index.ts";
import { createRegistry, declaredVariants } from "../../src/platform/host/registry.ts";
import { PostTarget } from "../../src/modules/posts/model.ts";

const pluginsDir = join(import.meta.dir, "../../plugins");

test("plugins/index.ts lists exactly the plugin folders on disk (run `bun scripts/gen-plugins.ts` after adding one)", () => {
  const expected = renderPluginIndex(pluginFolders(pluginsDir));
  expect(readFileSync(join(pluginsDir, "index.ts"), "utf8")).toBe(expected);
});

test("every folder's plugin declares the platform its folder is named after", () => {
  const registry = createRegistry();
  for (const f of pluginFolders(pluginsDir)) {
    expect(registry.get(f.name)?.platform as string).toBe(f.name);
    expect(registry.hasEmulator(f.name)).toBe(f.hasEmulator);
  }
});

test("one emulator instance per platform and sandbox profile per registry", () => {
  const registry = createRegistry();
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  for (const p of registry.list()) {
    if (!registry.hasEmulator(p.platform)) continue;
    expect(registry.emulatorFor(p.platform, a)).toBe(registry.emulatorFor(p.platform, a)!);
    expect(registry.emulatorFor(p.platform, b)).not.toBe(registry.emulatorFor(p.platform, a)!);
    expect(registry.newEmulator(p.platform)).not.toBe(registry.emulatorFor(p.platform, a)!);
  }
});

test("target_variant takes the variant names the fanning-out plugins declare, and a plugin that fans out must declare them", () => {
  expect(declaredVariants()).toEqual(["spotlight", "public_story"]);
  const shown = PostTarget.properties.target_variant.anyOf.map(
    (s: { const?: string; type?: string }) => s.const ?? s.type,
  );
  expect(shown).toEqual(["spotlight", "public_story", "null"]);
  const { variantNames: _, ...undeclared } = PLUGINS.snapchat;
  expect(() => createRegistry({ ...PLUGINS, snapchat: undeclared }, {})).toThrow("declares no variantNames");
});
