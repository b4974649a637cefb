import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMediaAccess, isForbiddenAddress } from "../../src/platform/host/media-guard.ts";
import { MediaError } from "../../src/platform/sdk.ts";

let server: ReturnType<typeof Bun.serve>;
/**
 * GET /stall: headers and a first chunk, then nothing. The first pull gives the chunk, the next never
 * settles; a stream that enqueued in start() and left start pending sometimes had Bun hold the headers
 * back too, so the open timed out instead of the read.
 */
function stalling(): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(c) {
      if (sent) return new Promise<void>(() => {});
      sent = true;
      c.enqueue(new Uint8Array(10));
    },
  });
}
let base: string;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/small.png":
          return new Response(new Uint8Array(1000), { headers: { "content-type": "image/png" } });
        case "/declared-big":
          return new Response(new Uint8Array(5000), { headers: { "content-type": "image/png" } });
        case "/chunked-big":
          // No Content-Length: the cap has to hold while streaming.
          return new Response(
            new ReadableStream({
              async pull(c) {
                c.enqueue(new Uint8Array(1024));
                await Bun.sleep(1);
              },
            }),
            { headers: { "content-type": "video/mp4" } },
          );
        case "/stall":
          return new Response(stalling(), { headers: { "content-type": "video/mp4" } });
        case "/to-other-loopback":
          return new Response(null, { status: 302, headers: { location: `http://127.0.0.2:${url.port}/small.png` } });
        case "/to-metadata":
          return new Response(null, { status: 301, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
        default:
          return new Response("no", { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

async function refusal(p: Promise<unknown>): Promise<MediaError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(MediaError);
    return e as MediaError;
  }
  throw new Error("expected the media to be refused");
}

describe("refused addresses", () => {
  const guard = createMediaAccess({ maxBytes: 10_000 });

  test.each([
    ["loopback", () => `${base}/small.png`],
    ["localhost by name", () => `http://localhost:${server.port}/small.png`],
    ["private 10/8", () => "http://10.1.2.3/a.png"],
    ["private 192.168/16", () => "http://192.168.1.10/a.png"],
    ["private 172.16/12", () => "http://172.20.0.1/a.png"],
    ["cloud metadata", () => "http://169.254.169.254/latest/meta-data/"],
    ["metadata host name", () => "http://metadata.google.internal/computeMetadata/v1/"],
    ["IPv6 loopback", () => `http://[::1]:${server.port}/small.png`],
    ["IPv4-mapped IPv6 loopback", () => `http://[::ffff:127.0.0.1]:${server.port}/small.png`],
    ["IPv6 unique local", () => "http://[fd00::1]/a.png"],
    ["unspecified", () => `http://0.0.0.0:${server.port}/small.png`],
  ])("%s is refused for good", async (_name, url) => {
    const e = await refusal(guard.open({ url: url(), type: "image" }));
    expect(e.retryable).toBe(false);
  });

  test("a name with one private address among public ones is refused", async () => {
    const g = createMediaAccess({ maxBytes: 10_000, resolve: async () => ["93.184.216.34", "10.0.0.5"] });
    const e = await refusal(g.open({ url: "http://mixed.example/a.png", type: "image" }));
    expect(e.message).toContain("10.0.0.5");
  });

  test("every redirect hop is checked again", async () => {
    const g = createMediaAccess({ maxBytes: 10_000, allowAddress: (ip) => ip === "127.0.0.1" });
    expect((await refusal(g.open({ url: `${base}/to-other-loopback`, type: "image" }))).message).toContain("127.0.0.2");
    expect((await refusal(g.open({ url: `${base}/to-metadata`, type: "image" }))).retryable).toBe(false);
  });

  test("plain HTTP is fetched from the address that was checked, with the URL's Host", async () => {
    // The name resolves to the test server once; a second lookup (a rebinding) would not be used.
    let lookups = 0;
    const g = createMediaAccess({
      maxBytes: 10_000,
      allowAddress: (ip) => ip === "127.0.0.1",
      resolve: async () => (lookups++ === 0 ? ["127.0.0.1"] : ["10.0.0.1"]),
    });
    const body = await g.open({ url: `http://media.example:${server.port}/small.png`, type: "image" });
    expect((await body.bytes()).byteLength).toBe(1000);
    expect(lookups).toBe(1);
  });

  test("only http and https are fetched", async () => {
    await refusal(guard.open({ url: "file:///etc/passwd", type: "image" }));
  });

  test("public addresses are allowed by the rule", () => {
    expect(isForbiddenAddress("93.184.216.34")).toBe(false);
    expect(isForbiddenAddress("2606:4700:4700::1111")).toBe(false);
    expect(isForbiddenAddress("100.64.0.1")).toBe(true);
    expect(isForbiddenAddress("fe80::1")).toBe(true);
    expect(isForbiddenAddress("::ffff:7f00:1")).toBe(true);
    expect(isForbiddenAddress("64:ff9b::a9fe:a9fe")).toBe(true);
    expect(isForbiddenAddress("::ffff:5db8:d822")).toBe(false);
  });
});

describe("the server's own storage", () => {
  test("its URLs are opened directly, even on loopback", async () => {
    const own = `${base}/media/med_x.png`;
    const g = createMediaAccess({
      maxBytes: 10_000,
      ownStorage: {
        openByPublicUrl: async (url) =>
          url === own
            ? { contentType: "image/png", size: 3, stream: () => new Response(new Uint8Array([1, 2, 3])).body! }
            : null,
      },
    });
    const body = await g.open({ url: own, type: "image" });
    expect(body.contentType).toBe("image/png");
    expect([...(await body.bytes())]).toEqual([1, 2, 3]);
    // Anything else on loopback is still refused.
    await refusal(g.open({ url: `${base}/small.png`, type: "image" }));
  });
});

describe("caps (loopback allowed for these tests only)", () => {
  const capped = (maxBytes: number, timeoutMs = 5_000) =>
    createMediaAccess({ maxBytes, timeoutMs, allowAddress: () => true });

  test("a file under the cap streams through with its type and size", async () => {
    const body = await capped(2_000).open({ url: `${base}/small.png`, type: "image" });
    expect(body.contentType).toBe("image/png");
    expect(body.size).toBe(1000);
    expect((await body.bytes()).byteLength).toBe(1000);
  });

  test("a declared size over the cap is refused before reading", async () => {
    const e = await refusal(capped(2_000).open({ url: `${base}/declared-big`, type: "image" }));
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("5000");
  });

  test("a body without a declared size is cut off at the cap", async () => {
    const body = await capped(10_000).open({ url: `${base}/chunked-big`, type: "video" });
    const e = await refusal(body.bytes());
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("larger than 10000");
  });

  test("a body that stalls is cut off at the deadline, as a retryable failure", async () => {
    // What is cut off here is the body, after the headers came (the open succeeds).
    const started = Date.now();
    const body = await capped(10_000, 1_500).open({ url: `${base}/stall`, type: "video" });
    const e = await refusal(body.bytes());
    expect(e.retryable).toBe(true);
    expect(e.message).toContain("reading");
    expect(e.message).toContain("took too long");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });

  test("a missing file is a permanent failure", async () => {
    const e = await refusal(capped(10_000).open({ url: `${base}/nothing`, type: "image" }));
    expect(e.retryable).toBe(false);
  });
});
