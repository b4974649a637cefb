/**
 * A plugin as one account sees it: its declaration with the account's own limits put in (a Mastodon
 * server's characters, files and sizes, stored at connect), for the account's answer and the checks at
 * creation. Plugins without `accountLimits` are returned as they are.
 */
import type { Plugin } from "../sdk.ts";

export function pluginForAccount(plugin: Plugin, metadata: Record<string, unknown> | null | undefined): Plugin {
  const own = plugin.accountLimits?.(metadata ?? {});
  if (!own) return plugin;
  return {
    ...plugin,
    textLimit: own.textMax ? { ...plugin.textLimit, max: own.textMax } : plugin.textLimit,
    mediaRequirements: own.mediaRequirements ?? plugin.mediaRequirements,
  };
}
