/**
 * Warnings a copy logs once at start about the platforms it is configured for (a LinkedIn API version
 * near its sunset), so an operator hears of a coming refusal before posts fail on it.
 */
import { platformSettings, type HostContext } from "./provider.ts";

export interface StartupWarning {
  platform: string;
  message: string;
}

/** Each configured platform's startupWarnings(); platforms missing a required setting are not in use and say nothing. */
export function startupWarnings(ctx: Pick<HostContext, "config" | "platforms">, now: Date): StartupWarning[] {
  const out: StartupWarning[] = [];
  for (const plugin of ctx.platforms.list()) {
    if (!plugin.startupWarnings) continue;
    const settings = platformSettings(ctx, plugin.platform);
    if ((plugin.connect?.requiredSettings ?? []).some((name) => !settings[name])) continue;
    for (const message of plugin.startupWarnings(settings, now)) out.push({ platform: plugin.platform, message });
  }
  return out;
}
