/** crier secrets rotate: re-encrypting stored secrets with SECRET_KEY after it changed. */
import { loadConfig, type Config } from "../config.ts";
import { HELP } from "./help.ts";
import { keyId } from "../db/crypto.ts";
import { UnreadableSecrets, type SecretsReport } from "../db/secret-rotation.ts";
import { adminSession, parse, Refused, UsageError, type AdminCall } from "./run.ts";

export async function secrets(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "rotate") {
    const { values } = parse(rest, { batch: { type: "string" } }, HELP["secrets rotate"]);
    const batch = Number(values.batch ?? 100);
    if (!/^\d+$/.test(values.batch ?? "100") || batch < 1 || batch > 10_000)
      throw new UsageError(`--batch must be a whole number from 1 to 10000, got "${values.batch}"`);
    const config = loadConfig();
    await adminSession(config, (call) => rotateSecrets(config, call, batch));
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.secrets);
  } else throw new UsageError(`unknown command 'secrets ${sub}' (see crier secrets --help)`);
}

/** Batches until nothing is left under another key; progress on stderr, the outcome on stdout. */
async function rotateSecrets(config: Config, call: AdminCall, batch: number) {
  let status: SecretsReport = await call("secrets.status", {});
  // Through the socket the server's keys are used: refuse to "rotate" to a key this environment does not name.
  if (status.key_id !== keyId(config.secretKey))
    throw new Refused(
      "the running server uses another SECRET_KEY than this environment: restart it with the new SECRET_KEY " +
        "(and the old one as SECRET_KEY_PREVIOUS) first, then run the rotation again",
    );
  if (status.unreadable.length) throw new Refused(new UnreadableSecrets(status.unreadable).message);
  const total = status.to_rotate;
  if (total > 0) console.error(`re-encrypting ${total} stored secret(s) with SECRET_KEY, ${batch} per transaction`);
  let done = 0;
  for (;;) {
    let rotated: number;
    try {
      ({ rotated } = await call("secrets.rotate-batch", { batch }));
    } catch (e) {
      // A row no key opens (written since the check, by a copy with yet another key): nothing of that
      // batch changed. Through the socket the error arrives as text, so the report says which rows.
      const now: SecretsReport = await call("secrets.status", {});
      if (now.unreadable.length) throw new Refused(new UnreadableSecrets(now.unreadable).message);
      throw e;
    }
    done += rotated;
    if (rotated > 0) {
      console.error(`re-encrypted ${done}/${Math.max(total, done)}`);
      continue;
    }
    // None free: finished, or the rest is locked by another run (or was written under the old key meanwhile).
    status = await call("secrets.status", {});
    if (status.unreadable.length) throw new Refused(new UnreadableSecrets(status.unreadable).message);
    if (status.to_rotate === 0) break;
    await Bun.sleep(200);
  }
  console.log(
    `re-encrypted ${done} stored secret(s); nothing is left under another key: SECRET_KEY_PREVIOUS can be removed ` +
      "(restart each copy without it) once links signed with it have expired",
  );
}
