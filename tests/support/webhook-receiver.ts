/** A webhook receiver on 127.0.0.1 that records every request and answers what the test scripts. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  json: { type: string; timestamp: string; data: any };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; afterwards 200. */
  script(...answers: { status: number; headers?: Record<string, string>; body?: string }[]): void;
  ofType(type: string): Received[];
  stop(): Promise<void>;
}

export function startReceiver(path = "/hook"): Receiver {
  const received: Received[] = [];
  let answers: { status: number; headers?: Record<string, string>; body?: string }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => {
        headers[k] = v;
      });
      received.push({ headers, body, json: JSON.parse(body) });
      const a = answers.shift() ?? { status: 200 };
      return new Response(a.body ?? "ok", { status: a.status, headers: a.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    received,
    script(...a) {
      answers = a;
    },
    ofType: (type) => received.filter((r) => r.json.type === type),
    stop: () => server.stop(true),
  };
}
