// Prints the README's analytics table from the plugin declarations: bun scripts/analytics-table.ts
import { renderAnalyticsTable } from "../src/platform/readme-table.ts";
import { createRegistry } from "../src/platform/registry.ts";

console.log(renderAnalyticsTable(createRegistry()));
