// Regenerates plugins/index.ts from the folders under plugins/. Run after adding a plugin folder or an
// emulator.ts: bun scripts/gen-plugins.ts (tests/platform/registry.test.ts fails while it is stale).
import { writeFileSync } from "node:fs";
import { pluginFolders, renderPluginIndex } from "./plugin-index.ts";

const folders = pluginFolders("plugins");
writeFileSync("plugins/index.ts", renderPluginIndex(folders));
console.log(
  `plugins/index.ts lists ${folders.length} plugin(s), ${folders.filter((f) => f.hasEmulator).length} with an emulator`,
);
