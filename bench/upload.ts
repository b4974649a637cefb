// bench/upload: PUT a large file through the fs driver and compare with `cp` of the same file on the
// same disk, in the same run. Reports throughput and the server's peak RSS growth (goal: under 64 MB).
//   npx bun bench/upload.ts            (BENCH_UPLOAD_MB=500 by default; DATABASE_URL to use PostgreSQL)
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync, closeSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

const MB = 1024 * 1024;
const sizeMb = Number(process.env.BENCH_UPLOAD_MB ?? 500);
const work = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "crier-bench-upload-"));
const source = join(work, "source.mp4");
const dataDir = join(work, "data");

function makeSource() {
  // An MP4 start (so the upload sniffs as video/mp4) then incompressible bytes, written in 8 MB blocks.
  const fd = openSync(source, "w");
  const ftyp = Buffer.from([0, 0, 0, 0x18, ...Buffer.from("ftypisom"), 0, 0, 2, 0, ...Buffer.from("isomiso2")]);
  writeSync(fd, ftyp);
  const block = randomBytes(8 * MB);
  let left = sizeMb * MB - ftyp.length;
  while (left > 0) {
    const n = Math.min(left, block.length);
    writeSync(fd, block, 0, n);
    left -= n;
  }
  closeSync(fd);
}

const kb = (field: string, pid: number) => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
};

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, (performance.now() - t0) / 1000];
}

async function main() {
  makeSource();
  const size = statSync(source).size;
  const server = Bun.spawn([process.execPath, join(import.meta.dir, "upload-server.ts"), dataDir], {
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = server.stdout.getReader();
    const { value } = await reader.read();
    const { url, token, pid } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]) as {
      url: string;
      token: string;
      pid: number;
    };

    const ticketRes = await fetch(`${url}/v1/media/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ filename: "bench.mp4", content_type: "video/mp4" }),
    });
    const ticket = (
      (await ticketRes.json()) as { data: { media_id: string; path: string; upload: { signedUrl: string } } }
    ).data;

    // Peak RSS of the upload alone: reset the high-water mark (clear_refs 5) once the server is warm.
    const baseline = kb("VmRSS", pid);
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
    } catch {
      /* not allowed: VmHWM then covers the start too */
    }
    let sampledPeak = baseline;
    const sampler = setInterval(() => {
      sampledPeak = Math.max(sampledPeak, kb("VmRSS", pid));
    }, 20);

    const curl = Bun.which("curl");
    const [status, uploadSeconds] = await timed(async () => {
      if (curl) {
        const p = Bun.spawn(
          [
            curl,
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "PUT",
            "-H",
            "Content-Type: video/mp4",
            "-T",
            source,
            ticket.upload.signedUrl,
          ],
          { stdout: "pipe" },
        );
        return Number(await new Response(p.stdout).text());
      }
      const res = await fetch(ticket.upload.signedUrl, {
        method: "PUT",
        headers: { "content-type": "video/mp4" },
        body: Bun.file(source),
      });
      await res.arrayBuffer();
      return res.status;
    });
    clearInterval(sampler);
    const hwm = kb("VmHWM", pid);
    const peak = Math.max(sampledPeak, Number.isNaN(hwm) ? 0 : hwm);
    if (status !== 200) throw new Error(`upload answered ${status}`);
    const stored = statSync(join(dataDir, "media", ticket.path)).size;
    if (stored !== size) throw new Error(`stored ${stored} bytes of ${size}`);

    const copy = join(work, "copy.mp4");
    const [, cpSeconds] = await timed(async () => {
      const p = Bun.spawn(["cp", source, copy]);
      if ((await p.exited) !== 0) throw new Error("cp failed");
    });

    const mbps = (s: number) => size / MB / s;
    const growth = (peak - baseline) / MB;
    console.log(
      `bench/upload: ${(size / MB).toFixed(0)} MB through the fs driver (client: ${curl ? "curl -T" : "fetch"}, database: ${process.env.DATABASE_URL ? "postgres" : "pglite"})`,
    );
    console.log(`  PUT upload      ${uploadSeconds.toFixed(2)} s   ${mbps(uploadSeconds).toFixed(0)} MB/s`);
    console.log(`  cp same disk    ${cpSeconds.toFixed(2)} s   ${mbps(cpSeconds).toFixed(0)} MB/s`);
    console.log(`  upload / cp     ${(mbps(uploadSeconds) / mbps(cpSeconds)).toFixed(2)}x cp throughput`);
    console.log(
      `  server RSS      ${(baseline / MB).toFixed(0)} MB before, ${(peak / MB).toFixed(0)} MB peak, growth ${growth.toFixed(1)} MB (sampled ${((sampledPeak - baseline) / MB).toFixed(1)}, VmHWM ${((hwm - baseline) / MB).toFixed(1)}) (goal < 64 MB: ${growth < 64 ? "met" : "MISSED"})`,
    );
  } finally {
    server.kill();
    await server.exited;
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
