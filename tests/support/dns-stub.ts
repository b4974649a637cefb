/**
 * A DNS server on 127.0.0.1 (UDP) that answers A queries with what the test scripts: `answer(name, n)`
 * gets the name and how many A queries for it came before (0 for the first), and returns the IPv4
 * address to give, or null for "no such name". AAAA queries get an empty answer (the name has no IPv6).
 */
import { createSocket } from "node:dgram";

export interface DnsStub {
  /** "127.0.0.1:<port>", for a resolver's server list. */
  server: string;
  /** The A queries seen, in order. */
  queries: string[];
  answer: (name: string, n: number) => string | null;
  stop(): Promise<void>;
}

function questionOf(msg: Buffer): { name: string; type: number; end: number } {
  let off = 12;
  const labels: string[] = [];
  while (msg[off] !== 0) {
    labels.push(msg.subarray(off + 1, off + 1 + msg[off]).toString("latin1"));
    off += msg[off] + 1;
  }
  const type = msg.readUInt16BE(off + 1);
  return { name: labels.join(".").toLowerCase(), type, end: off + 5 };
}

export async function startDnsStub(answer: DnsStub["answer"]): Promise<DnsStub> {
  const sock = createSocket("udp4");
  const stub: DnsStub = { server: "", queries: [], answer, stop: () => new Promise((r) => sock.close(() => r())) };
  sock.on("message", (msg, from) => {
    const q = questionOf(msg);
    let ip: string | null = null;
    if (q.type === 1) {
      ip = stub.answer(q.name, stub.queries.filter((n) => n === q.name).length);
      stub.queries.push(q.name);
    }
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    // A response, recursion available, NXDOMAIN when an A query has no answer.
    header.writeUInt16BE(q.type === 1 && ip === null ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(ip ? 1 : 0, 6);
    const parts = [header, msg.subarray(12, q.end)];
    if (ip) {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name of the question
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL 0: nothing may cache it
      rr.writeUInt16BE(4, 10);
      ip.split(".").forEach((b, i) => (rr[12 + i] = Number(b)));
      parts.push(rr);
    }
    sock.send(Buffer.concat(parts), from.port, from.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, "127.0.0.1", () => resolve()));
  stub.server = `127.0.0.1:${sock.address().port}`;
  return stub;
}
