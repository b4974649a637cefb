/**
 * One HTTP exchange over a raw TCP socket to 127.0.0.1, for requests fetch() cannot send: no Host
 * header, HTTP/1.0, a Content-Length that the body does not match.
 */
export async function rawHttp(
  port: number,
  request: string,
  timeoutMs = 10_000,
): Promise<{ status: number; headers: string; body: string; raw: string }> {
  const raw = await new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString("utf8"));
    const timer = setTimeout(done, timeoutMs);
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (s) => {
          s.write(request);
        },
        data: (_s, d) => {
          chunks.push(Buffer.from(d));
        },
        close: () => {
          clearTimeout(timer);
          done();
        },
        error: () => {
          clearTimeout(timer);
          done();
        },
      },
    }).catch(done);
  });
  const split = raw.indexOf("\r\n\r\n");
  const head = split === -1 ? raw : raw.slice(0, split);
  let body = split === -1 ? "" : raw.slice(split + 4);
  if (/transfer-encoding:\s*chunked/i.test(head)) body = unchunk(body);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, headers: head, body, raw };
}

function unchunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    if (eol === -1) return out;
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}
