// Prints the README's platform table from the plugin declarations: bun scripts/platform-table.ts
import { renderPlatformTable } from "../src/platform/readme-table.ts";
import { createRegistry } from "../src/platform/registry.ts";

console.log(renderPlatformTable(createRegistry()));
