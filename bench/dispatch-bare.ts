// The yardstick of bench/dispatch.ts: a bare loop POSTing createRecord to the Bluesky emulator, one request
// after another, in its own process like an engine copy (so the emulator's process does only the serving).
// Env: CRIER_BLUESKY_API_URL, BENCH_BARE (requests). Prints the requests/s.
export {};

const url = process.env.CRIER_BLUESKY_API_URL!;
const n = Number(process.env.BENCH_BARE ?? 5_000);
const session = (await (
  await fetch(`${url}/xrpc/com.atproto.server.createSession`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ identifier: "bare.test", password: "x" }),
  })
).json()) as { did: string; accessJwt: string };
const t0 = performance.now();
for (let i = 0; i < n; i++) {
  const res = await fetch(`${url}/xrpc/com.atproto.repo.createRecord`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${session.accessJwt}` },
    body: JSON.stringify({
      repo: session.did,
      collection: "app.bsky.feed.post",
      record: { $type: "app.bsky.feed.post", text: `bare ${i}`, createdAt: new Date().toISOString() },
    }),
  });
  if (!res.ok) throw new Error(`bare loop: ${res.status}`);
  await res.arrayBuffer();
}
console.log(String(n / ((performance.now() - t0) / 1000)));
process.exit(0);
