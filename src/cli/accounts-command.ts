/** crier accounts check: can each connected account publish now? */
import { loadConfig } from "../config.ts";
import type { MediaToolsReport } from "../media/tools-report.ts";
import type { AccountCheckRow } from "../modules/accounts/check.ts";
import { HELP } from "./help.ts";
import { adminSession, parse, table, UsageError } from "./run.ts";

export async function accountsCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "check") {
    const { values } = parse(
      rest,
      { profile: { type: "string" }, sandbox: { type: "boolean" }, json: { type: "boolean" } },
      HELP["accounts check"],
    );
    if (values.profile !== undefined && !/^[0-9a-f-]{36}$/i.test(values.profile))
      throw new UsageError("--profile takes a profile's id from 'crier profiles list'");
    // The media tools are the serving copy's (its FFMPEG_PATH and PATH) when one answers.
    const [rows, tools] = await adminSession(loadConfig(), async (call) => [
      (await call("accounts.check", {
        profileId: values.profile,
        includeSandbox: !!values.sandbox,
      })) as AccountCheckRow[],
      (await call("media.tools", {})) as MediaToolsReport,
    ]);
    // On stderr, so --json stays one document: a missing tool turns media features off for every account.
    for (const line of tools.missing) console.error(`warning: ${line}`);
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else {
      const now = Date.now();
      console.log(
        table(
          rows.map((r) => ({
            account: r.account_id,
            platform: r.platform,
            username: r.username,
            token: r.token,
            expires: expiresIn(r.expires_at, now),
            scopes:
              r.scopes.granted === null
                ? "not reported"
                : Object.keys(r.scopes.missing).length
                  ? `missing for ${Object.keys(r.scopes.missing).join(",")}`
                  : "ok",
            api_version: r.api_version ? `${r.api_version.value} ${r.api_version.accepted ? "ok" : "refused"}` : "-",
            publish: r.can_publish ? "yes" : "NO",
          })),
          ["account", "platform", "username", "token", "expires", "scopes", "api_version", "publish"],
        ),
      );
      for (const r of rows) for (const p of r.problems) console.log(`${r.platform} ${r.username}: ${p}`);
    }
    if (rows.some((r) => !r.can_publish)) process.exitCode = 1;
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.accounts);
  } else throw new UsageError(`unknown command 'accounts ${sub}' (see crier accounts --help)`);
}

/** "in 3 d 4 h", "expired 2 h ago", or "-" when the platform gives no expiry. */
function expiresIn(at: string | null, now: number): string {
  if (!at) return "-";
  const ms = Date.parse(at) - now;
  const span = Math.abs(ms);
  const d = Math.floor(span / 86_400_000);
  const h = Math.floor((span % 86_400_000) / 3_600_000);
  const m = Math.floor((span % 3_600_000) / 60_000);
  const text = d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min`;
  return ms >= 0 ? `in ${text}` : `expired ${text} ago`;
}
