// Where PostgreSQL spends its time during a benchmark, read from pg_stat_statements (bench/dispatch and
// bench/scale print it after the drains). The module must be loaded by the server
// (shared_preload_libraries = 'pg_stat_statements', then a restart): without it the benches run as before
// and say once how to turn it on.
//
// track = all on the scratch database, so the statements inside crier_claim and crier_record_results are
// counted besides the calls themselves; the calls' own lines then include their nested statements' time.
import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";

export interface StatementReport {
  /** Resets the counters (before a drain). */
  reset(): Promise<void>;
  /** The statements with the most time since the reset, per published target. */
  print(targets: number, top?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Sets the scratch database up for pg_stat_statements. Connections opened after this call (the copies'
 * processes) track nested statements. null when the server has not loaded the module.
 */
export async function statementReport(url: string): Promise<StatementReport | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [loaded] = await sql`select setting from pg_settings where name = 'shared_preload_libraries'`;
  if (!String(loaded?.setting ?? "").includes("pg_stat_statements")) {
    console.log(
      "  (pg_stat_statements is not loaded on this server: add it to shared_preload_libraries and restart to see where PostgreSQL's time goes)",
    );
    await sql.end();
    return null;
  }
  await sql`create extension if not exists pg_stat_statements`;
  const [{ db }] = await sql`select current_database() as db`;
  await sql.unsafe(`alter database "${db}" set pg_stat_statements.track = 'all'`);
  return {
    async reset() {
      // This database's statements only: a bench beside it on the same server keeps its own.
      await sql`select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)`;
    },
    async print(targets, top = 8) {
      const rows = await sql<
        { calls: string; ms: number; rows: string; pages: string; query: string; toplevel: boolean }[]
      >`
        select calls, total_exec_time as ms, rows, shared_blks_hit + shared_blks_read as pages, query, toplevel
        from pg_stat_statements
        where dbid = (select oid from pg_database where datname = current_database())
        order by total_exec_time desc limit ${top}`;
      // Buffer pages read (from PostgreSQL's cache or the disk): the work itself, where time and CPU also
      // count what the rest of the machine did to the server meanwhile.
      const total = await sql<{ ms: number; calls: string; pages: string }[]>`
        select coalesce(sum(total_exec_time), 0) as ms, coalesce(sum(calls), 0) as calls,
          coalesce(sum(shared_blks_hit + shared_blks_read), 0) as pages from pg_stat_statements
        where dbid = (select oid from pg_database where datname = current_database()) and toplevel`;
      console.log(
        `    pg_stat_statements: ${Number(total[0].calls)} top-level statements, ${((Number(total[0].ms) * 1000) / targets).toFixed(0)} µs of execution and ${(Number(total[0].pages) / targets).toFixed(0)} buffer pages read per target; the most time:`,
      );
      for (const r of rows) {
        const perTarget = ((Number(r.ms) * 1000) / targets).toFixed(0);
        const calls = Number(r.calls);
        console.log(
          `      ${perTarget.padStart(5)} µs/target ${String(calls).padStart(7)} calls ${(Number(r.ms) / calls).toFixed(3).padStart(8)} ms/call ${(Number(r.rows) / calls).toFixed(1).padStart(6)} rows/call ${(Number(r.pages) / calls).toFixed(0).padStart(6)} pages/call ${r.toplevel ? "  " : "↳ "}${oneLine(r.query)}`,
        );
      }
    },
    close: () => sql.end(),
  };
}

function oneLine(query: string): string {
  const q = query.replace(/\s+/g, " ").trim();
  return q.length > 110 ? `${q.slice(0, 107)}...` : q;
}

/**
 * CPU time of the PostgreSQL server's processes, when it runs on this machine (Linux): its live processes,
 * plus what the postmaster reaped (a backend's time is added to its parent's when its connection closes).
 * null when no PostgreSQL process is visible.
 */
export function localPostgresCpuMs(): number | null {
  let ms = 0;
  let found = false;
  for (const p of postgresProcesses()) {
    found = true;
    ms += p.cpuMs + (p.ppid === 1 ? p.childrenMs : 0);
  }
  return found ? ms : null;
}

/**
 * The CPU time PostgreSQL spends for one database, when the server runs on this machine: its backends and
 * autovacuum workers (their process titles name the database), sampled every 50 ms so that a backend's
 * time is kept when its connection closes; the server's own background processes (WAL writer,
 * checkpointer, ...) apart. Unlike localPostgresCpuMs, other databases' work on the same server (another
 * test run) is left out.
 */
export class DatabaseCpu {
  private readonly seen = new Map<number, { first: number; last: number; backend: boolean }>();
  /** What the last stop() counted in the server's background processes (WAL writer, checkpointer, ...). */
  backgroundMs = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  constructor(private readonly database: string) {}

  start(): void {
    this.seen.clear();
    this.sample();
    // Backends that exist at the start count from there, new ones from zero.
    for (const v of this.seen.values()) v.first = v.last;
    this.timer = setInterval(() => this.sample(), 50);
  }

  /**
   * Stops sampling; the CPU ms the database's backends and autovacuum workers spent since start, or null
   * when no PostgreSQL process is visible. The server-wide processes' share is in backgroundMs: it counts
   * every database's WAL and checkpoints, so a busy neighbour on the same server would blur a figure.
   */
  stop(): number | null {
    clearInterval(this.timer);
    this.sample();
    if (!this.seen.size) return null;
    let ms = 0;
    this.backgroundMs = 0;
    for (const v of this.seen.values()) {
      if (v.backend) ms += v.last - v.first;
      else this.backgroundMs += v.last - v.first;
    }
    return ms;
  }

  private sample() {
    for (const p of postgresProcesses()) {
      const title = p.title.split(/\s+/);
      // "postgres: 15/main: <user> <database> <client> <state>", "postgres: 15/main: autovacuum worker
      // <database>", or a server-wide process: "postgres: 15/main: walwriter".
      const vacuum = title[2] === "autovacuum" && title[3] === "worker";
      const backend = vacuum || (title.length >= 5 && /\(\d+\)$|^\[local\]$/.test(title[4]));
      if (vacuum && !title.slice(4).includes(this.database)) continue;
      if (backend && !vacuum && title[3] !== this.database) continue;
      if (!backend && p.ppid === 1) continue; // the postmaster: what it reaped is every database's
      const v = this.seen.get(p.pid);
      if (v) v.last = Math.max(v.last, p.cpuMs);
      else this.seen.set(p.pid, { first: 0, last: p.cpuMs, backend });
    }
  }
}

interface PostgresProcess {
  pid: number;
  ppid: number;
  title: string;
  cpuMs: number;
  childrenMs: number;
}

function postgresProcesses(): PostgresProcess[] {
  const out: PostgresProcess[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    let title: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes(" (postgres) ")) continue;
      title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue; // gone meanwhile
    }
    // Fields after "(comm) ": state ppid ... utime(12th) stime cutime cstime. USER_HZ is 100 on Linux.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.push({
      pid: Number(pid),
      ppid: Number(f[1]),
      title,
      cpuMs: (Number(f[11]) + Number(f[12])) * 10,
      childrenMs: (Number(f[13]) + Number(f[14])) * 10,
    });
  }
  return out;
}
