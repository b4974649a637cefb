import { existsSync, statSync } from "node:fs";

const EVERY_MS = 2000;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * Progress of a long backup or restore on stderr: nothing for a run shorter than two seconds, then a
 * line every two seconds.
 */
export function progressLine(label: string, total?: number) {
  const started = Date.now();
  let last = started;
  return (bytes: number) => {
    const now = Date.now();
    if (now - last < EVERY_MS) return;
    last = now;
    const share = total ? ` of ${mb(total)} (${Math.floor((bytes / total) * 100)} %)` : "";
    console.error(`${label}: ${mb(bytes)}${share}, ${Math.round((now - started) / 1000)} s`);
  };
}

/** Reports the growth of a file another process (the server, for a backup) is writing. */
export function watchFileGrowth(path: string, label: string): { stop(): void } {
  const report = progressLine(label);
  const timer = setInterval(() => {
    // The file is renamed into place at the end, between the check and the stat at worst.
    if (existsSync(path)) report(statSync(path, { throwIfNoEntry: false })?.size ?? 0);
  }, EVERY_MS / 4);
  return { stop: () => clearInterval(timer) };
}

/**
 * Progress of a count of rows on stderr: a bar redrawn in place on a terminal; elsewhere (a log, a
 * pipe) a line every two seconds, so a long run shows it is alive without flooding the log.
 */
export function rowProgress(label: string, total: number) {
  const tty = process.stderr.isTTY === true;
  let last = Date.now();
  const bar = (done: number) => {
    const width = 30;
    const full = Math.round((done / Math.max(total, 1)) * width);
    return `[${"#".repeat(full)}${"-".repeat(width - full)}] ${done}/${total} rows`;
  };
  return {
    update(done: number) {
      if (tty) process.stderr.write(`\r${label} ${bar(done)}`);
      else if (Date.now() - last >= EVERY_MS) {
        last = Date.now();
        console.error(`${label}: ${done}/${total} rows`);
      }
    },
    end() {
      if (tty) process.stderr.write("\n");
    },
  };
}
