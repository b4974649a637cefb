/**
 * Issue 26, item 2: webhook SSRF by DNS rebinding. The guard resolves a webhook's host once, checks every
 * address, and the delivery connects to that address (the name kept in Host and, over HTTPS, as the TLS
 * server name). A DNS stub on 127.0.0.1 stands for the attacker's name server: the guard is pointed at it
 * through ctx.webhookGuard (tests only), and 127.0.0.2 stands for a public address (the test's
 * allow-list), while 127.0.0.1 is "the inside", a service the attacker wants to read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isForbiddenAddress } from "../../src/platform/address-rule.ts";
import { startDnsStub, type DnsStub } from "../support/dns-stub.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

const OUTSIDE = "127.0.0.2";

interface Seen {
  host: string | null;
  type: string;
}

/** A server on `hostname`, recording what reaches it and answering `answer`. */
function serveAt(hostname: string, port: number, answer: string, tls?: { cert: string; key: string }) {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname,
    port,
    tls,
    async fetch(req) {
      const body = await req.text();
      seen.push({ host: req.headers.get("host"), type: (JSON.parse(body || "{}") as { type?: string }).type ?? "" });
      return new Response(answer);
    },
  });
  return { seen, port: server.port!, stop: () => server.stop(true) };
}

/**
 * The two servers on one port: the port the system gave the outside one can be taken on 127.0.0.1 by
 * something else (seen in CI: EADDRINUSE), so another is tried.
 */
function samePort(tls?: { cert: string; key: string }) {
  for (let attempt = 1; ; attempt++) {
    const outside = serveAt(OUTSIDE, 0, "outside receiver", tls);
    try {
      return { outside, inside: serveAt("127.0.0.1", outside.port, "INSIDE SECRET: internal service answer", tls) };
    } catch (e) {
      void outside.stop();
      if ((e as { code?: string }).code !== "EADDRINUSE" || attempt === 20) throw e;
    }
  }
}

/** An outside receiver on 127.0.0.2 and an inside service on 127.0.0.1, on the same port. */
function outsideAndInside(tls?: { cert: string; key: string }) {
  const { outside, inside } = samePort(tls);
  return {
    outside,
    inside,
    port: outside.port,
    async stop() {
      await outside.stop();
      await inside.stop();
    },
  };
}

let h: EngineHarness;
let dns: DnsStub;
let token: string;
/** What the stub answers for each name: one address, or one per query in order (the last repeats). */
const zone = new Map<string, string[]>();

beforeAll(async () => {
  dns = await startDnsStub((name, n) => {
    const answers = zone.get(name);
    return answers ? answers[Math.min(n, answers.length - 1)] : null;
  });
  h = await engineHarness();
  h.ctx.config.webhookAllowPrivate = false;
  h.ctx.webhookGuard = { dnsServers: [dns.server], allowAddress: (ip) => ip === OUTSIDE || !isForbiddenAddress(ip) };
  ({ token } = await h.profile());
});
afterAll(async () => {
  await h.close();
  await dns.stop();
});

const api = (method: string, path: string, body?: unknown) => h.request(method, path, { token, body });

async function createHook(url: string) {
  const res = await api("POST", "/v1/webhooks", { url, events: ["*"] });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

describe("DNS rebinding", () => {
  test("creation: a name that resolves to loopback is refused; the check is the guard's resolver's", async () => {
    zone.set("inside.rebind.test", ["127.0.0.1"]);
    zone.set("outside.rebind.test", [OUTSIDE]);
    const refused = await api("POST", "/v1/webhooks", { url: "http://inside.rebind.test/hook", events: ["*"] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("webhook_url_not_allowed");
    expect(refused.body.error.message).toContain("resolves to 127.0.0.1");
    expect((await api("POST", "/v1/webhooks", { url: "http://outside.rebind.test/hook", events: ["*"] })).status).toBe(
      201,
    );
  });

  test("/test: a name checked as outside but resolved again to the inside reaches only the outside", async () => {
    // The guard's resolver says 127.0.0.2 for "localhost"; the system's says 127.0.0.1. A delivery that
    // resolved the name again (as fetch does) would read the inside service into the response excerpt.
    zone.set("localhost", [OUTSIDE]);
    const s = outsideAndInside();
    try {
      const id = await createHook(`http://localhost:${s.port}/hook`);
      const res = await api("POST", `/v1/webhooks/${id}/test`);
      expect(res.status).toBe(200);
      const attempt = res.body.data.attempts[0];
      expect(attempt.response_excerpt ?? "").not.toContain("INSIDE SECRET");
      expect(s.inside.seen).toHaveLength(0);
      expect(res.body.data.status).toBe("delivered");
      expect(attempt.response_excerpt).toBe("outside receiver");
      // The request went to the checked address with the URL's own Host header.
      expect(s.outside.seen).toEqual([{ host: `localhost:${s.port}`, type: "webhook.test" }]);
    } finally {
      await s.stop();
    }
  });

  test("engine delivery: connects to the checked address, never to a second resolution", async () => {
    zone.set("localhost", [OUTSIDE]);
    const own = await h.profile();
    const s = outsideAndInside();
    try {
      const res = await h.request("POST", "/v1/webhooks", {
        token: own.token,
        body: { url: `http://localhost:${s.port}/hook`, events: ["account.connected"] },
      });
      expect(res.status).toBe(201);
      await h.bluesky(own.profileId, "pinned.test");
      await h.engine.runUntilIdle();
      expect(s.inside.seen).toHaveLength(0);
      expect(s.outside.seen).toEqual([{ host: `localhost:${s.port}`, type: "account.connected" }]);
    } finally {
      await s.stop();
    }
  });

  test("a name that rebinds to loopback after creation: /test and delivery are refused, nothing reaches it", async () => {
    const own = await h.profile();
    const s = outsideAndInside();
    try {
      // First answer outside (the check at creation), every later one inside.
      zone.set("flip.rebind.test", [OUTSIDE, "127.0.0.1"]);
      const res = await h.request("POST", "/v1/webhooks", {
        token: own.token,
        body: { url: `http://flip.rebind.test:${s.port}/hook`, events: ["account.connected"] },
      });
      expect(res.status).toBe(201);
      const t = await h.request("POST", `/v1/webhooks/${res.body.data.id}/test`, { token: own.token });
      expect(t.body.data.status).toBe("pending");
      expect(t.body.data.attempts[0].error).toContain("resolves to 127.0.0.1");
      expect(t.body.data.attempts[0].response_excerpt).toBeNull();
      await h.bluesky(own.profileId, "flip.test");
      await h.engine.runUntilIdle();
      const list = await h.request("GET", `/v1/webhooks/${res.body.data.id}/deliveries?event=account.connected`, {
        token: own.token,
      });
      expect(list.body.data[0].attempts[0].error).toContain("resolves to 127.0.0.1");
      expect(s.inside.seen).toHaveLength(0);
      expect(s.outside.seen).toHaveLength(0);
    } finally {
      await s.stop();
    }
  });
});

describe("HTTPS", () => {
  let tls: { cert: string; key: string };
  beforeAll(() => {
    // A self-signed certificate for rebind.test only, made for this run.
    const dir = mkdtempSync(join(tmpdir(), "crier-tls-"));
    const made = Bun.spawnSync([
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "2",
      "-subj",
      "/CN=rebind.test",
      "-addext",
      "subjectAltName=DNS:rebind.test",
    ]);
    if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
    tls = { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
    h.ctx.webhookGuard = { ...h.ctx.webhookGuard, ca: tls.cert };
  });

  test("connects to the checked address with the name as TLS server name and Host", async () => {
    zone.set("rebind.test", [OUTSIDE]);
    const s = outsideAndInside(tls);
    try {
      const id = await createHook(`https://rebind.test:${s.port}/hook`);
      const res = await api("POST", `/v1/webhooks/${id}/test`);
      expect(res.body.data.attempts[0].error).toBeNull();
      expect(res.body.data.status).toBe("delivered");
      expect(s.outside.seen).toEqual([{ host: `rebind.test:${s.port}`, type: "webhook.test" }]);
      expect(s.inside.seen).toHaveLength(0);
    } finally {
      await s.stop();
    }
  });

  test("the certificate is checked against the URL's name, not the address", async () => {
    // other.test resolves to the same receiver, whose certificate names only rebind.test.
    zone.set("other.test", [OUTSIDE]);
    const s = outsideAndInside(tls);
    try {
      const id = await createHook(`https://other.test:${s.port}/hook`);
      const res = await api("POST", `/v1/webhooks/${id}/test`);
      expect(res.body.data.status).toBe("pending");
      expect(res.body.data.attempts[0].error).toMatch(/ALTNAME|certificate|hostname/i);
      expect(s.outside.seen).toHaveLength(0);
    } finally {
      await s.stop();
    }
  });
});

describe("the address rule", () => {
  test("IPv4-compatible, 6to4, local-use NAT64 and site-local IPv6 are refused", () => {
    for (const ip of [
      "::127.0.0.1",
      "::10.0.0.1",
      "::8.8.8.8",
      "::7f00:1",
      "2002:7f00:1::1",
      "2002:808:808::1",
      "2002::",
      "64:ff9b:1::a00:1",
      "64:ff9b:1:ffff::1",
      "fec0::1",
      "feff:ffff::1",
      // Other spellings of forms already refused.
      "0:0:0:0:0:ffff:7f00:1",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
      "64:ff9b::10.0.0.1",
      "64:ff9b:0:0:0:0:a9fe:a9fe",
    ])
      expect(`${ip} ${isForbiddenAddress(ip)}`).toBe(`${ip} true`);
  });

  test("public addresses stay allowed", () => {
    for (const ip of ["93.184.216.34", "2606:4700:4700::1111", "::ffff:5db8:d822", "64:ff9b::808:808", "2003::1"])
      expect(`${ip} ${isForbiddenAddress(ip)}`).toBe(`${ip} false`);
  });

  test("a webhook to an IPv6 literal of a refused form is refused at creation", async () => {
    for (const url of [
      "http://[::127.0.0.1]/x",
      "http://[2002:7f00:1::]/x",
      "http://[64:ff9b:1::a00:1]/x",
      "http://[fec0::1]/x",
    ]) {
      const res = await api("POST", "/v1/webhooks", { url, events: ["*"] });
      expect(`${url} ${res.status}`).toBe(`${url} 400`);
    }
  });
});
