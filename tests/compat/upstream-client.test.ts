/**
 * The calls of a published client of the upstream API (a Next.js app that mass-schedules Instagram
 * Reels), in its order, replayed over real HTTP against Crier as a new user pointing it here would see
 * it: on each database (the suite runs on both) and on both storage drivers. Written from the client's
 * documented behaviour; none of its code is used. CRIER_PRINT_TRANSCRIPT=1 prints what it saw.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { makeVideo } from "../support/media-files.ts";
import { startS3 } from "../support/s3.ts";

type S3 = Awaited<ReturnType<typeof startS3>>;

for (const storage of ["fs", "s3"] as const) {
  describe(`an upstream client, media on ${storage}`, () => {
    let h: ListeningHarness;
    let s3: S3 | undefined;
    let token: string;
    const transcript: string[] = [];

    beforeAll(async () => {
      s3 = storage === "s3" ? await startS3() : undefined;
      h = await listeningHarness({}, s3 ? { s3: s3.config } : {});
      ({ token } = await h.profile({ sandbox: true }));
      const start = await call("POST", "/v1/accounts/connect/instagram");
      expect((await followAuthorization(start.json.data.authorization_url)).html).toContain("Account connected");
    });
    afterAll(async () => {
      await h.stop();
      await s3?.stop();
      if (process.env.CRIER_PRINT_TRANSCRIPT) console.log(`--- media on ${storage}\n${transcript.join("\n")}`);
    });

    /** One call as the client makes it: JSON in, JSON out, the bearer key, nothing else. */
    async function call(method: string, path: string, body?: unknown) {
      const res = await fetch(`${h.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.json()) as any;
      transcript.push(`${method} ${path.replace(/[0-9a-f-]{36}|med_[\w-]+/g, "{id}")} -> ${res.status}`);
      return { status: res.status, json, headers: res.headers };
    }

    test("accounts, upload with the shorthand type, PUT, poll, create with its own keys, edit, cancel many", async () => {
      // 1. The active Instagram accounts.
      const listed = await call("GET", "/v1/accounts");
      expect(listed.status).toBe(200);
      const account = listed.json.data.find((a: any) => a.platform === "instagram" && a.status === "active");
      expect(account).toBeDefined();

      const ids: string[] = [];
      for (let n = 0; n < 3; n++) {
        // 2. A ticket for "video", not a MIME type.
        const ticket = await call("POST", "/v1/media/uploads", { filename: `clip${n}.mp4`, content_type: "video" });
        expect(ticket.status).toBe(201);
        expect(ticket.json.data.content_type).toBe("video/mp4");
        // 3. The bytes, with the file's type; anything but exactly 200 is a failure to this client.
        const put = await fetch(ticket.json.data.upload.signedUrl, {
          method: "PUT",
          headers: { "content-type": "video/mp4" },
          // A real Reel: Instagram takes 3 s to 15 min at 23 to 60 fps, which Crier now checks from the file.
          body: makeVideo({ width: 360, height: 640, seconds: 3 + n, fps: 30 }),
        });
        transcript.push(`PUT signedUrl -> ${put.status}`);
        expect(put.status).toBe(200);
        // 4. Polled until public_url is there.
        let publicUrl: string | undefined;
        for (let i = 0; i < 20 && !publicUrl; i++) {
          const media = await call("GET", `/v1/media/${ticket.json.data.media_id}`);
          publicUrl = media.json.data?.public_url;
        }
        expect(publicUrl).toBeTruthy();
        // 5. The post, with the client's own bookkeeping keys and no Idempotency-Key.
        const publishAt = new Date(Date.now() + (n + 1) * 86_400_000).toISOString();
        const created = await call("POST", "/v1/posts", {
          content: `Reel ${n} #crier`,
          publish_at: publishAt,
          duplicateKey: `clip${n}.mp4-${publishAt}`,
          source_file_path: `/Users/me/reels/clip${n}.mp4`,
          origin: "manual",
          targets: [{ account_id: account.id, username: account.username, platform: "instagram", status: "scheduled" }],
          media: [{ url: publicUrl, type: "video" }],
        });
        expect(created.status).toBe(201);
        expect(created.json.data.status).toBe("scheduled");
        expect(created.headers.get("crier-ignored-fields")).toContain("duplicateKey");
        ids.push(created.json.data.id);
      }

      // 6. An edit of text and time.
      const edited = await call("PATCH", `/v1/posts/${ids[0]}`, {
        content: "Reel 0, edited",
        publish_at: new Date(Date.now() + 5 * 86_400_000).toISOString(),
      });
      expect(edited.status).toBe(200);
      expect(edited.json.data.content).toBe("Reel 0, edited");

      // 7. Cancelled with DELETE, many in a row; a 404 means already gone.
      for (const id of ids) expect((await call("DELETE", `/v1/posts/${id}`)).status).toBe(200);
      expect((await call("DELETE", `/v1/posts/${ids[1]}`)).status).toBe(404);
      expect((await call("GET", "/v1/posts")).json.data).toEqual([]);
    });
  });
}
