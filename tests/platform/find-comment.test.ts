/**
 * How a first comment is looked for after an unknown outcome: "absent" lets the engine try again, so it
 * must only be said when the listing really proves the comment is not there.
 */
import { expect, test } from "bun:test";
import { findComment, type CommentListing } from "../../src/platform/find-comment.ts";
import type { CommentJob } from "../../src/platform/sdk.ts";

const job: CommentJob = {
  text: "First!\r\n",
  parent: { platformPostId: "p1", url: null },
  options: {},
  idempotencyToken: "t",
};
const since = new Date("2026-11-26T10:00:00Z");
const window = { since, until: new Date("2026-11-26T10:00:30Z") };
const at = (s: number) => new Date(since.getTime() + s * 1000);
const listing =
  (p: Partial<CommentListing>): (() => Promise<CommentListing>) =>
  async () => ({
    comments: [],
    more: false,
    oldest: null,
    ...p,
  });

test("the account's comment with the same text (line ends and edges normalised) in the window is found", async () => {
  const comments = [{ id: "c1", url: "u1", text: "First!", createdAt: at(5) }];
  expect(await findComment(job, window, "comments", listing({ comments, oldest: at(5) }))).toEqual({
    kind: "found",
    platformPostId: "c1",
    url: "u1",
  });
});

test("the same text outside the window (with its slack) is another comment: absent", async () => {
  const comments = [{ id: "c1", url: null, text: "First!", createdAt: at(-600) }];
  expect((await findComment(job, window, "comments", listing({ comments, oldest: at(-600) }))).kind).toBe("absent");
});

test("two comments with the same text in the window cannot be told apart", async () => {
  const comments = [
    { id: "c1", url: null, text: "First!", createdAt: at(1) },
    { id: "c2", url: null, text: "First!", createdAt: at(2) },
  ];
  expect((await findComment(job, window, "comments", listing({ comments }))).kind).toBe("cannot_tell");
});

test("a listing with more pages proves absence only when it reaches back past the window", async () => {
  expect((await findComment(job, window, "comments", listing({ more: true, oldest: at(10) }))).kind).toBe(
    "cannot_tell",
  );
  expect((await findComment(job, window, "comments", listing({ more: true, oldest: at(-3600) }))).kind).toBe("absent");
});

test("a listing the platform refused is cannot_tell, never absent", async () => {
  const refused = async (): Promise<CommentListing> => {
    throw new Error("403 ACCESS_DENIED");
  };
  expect(await findComment(job, window, "comments", refused)).toMatchObject({
    kind: "cannot_tell",
    reason: expect.stringContaining("ACCESS_DENIED"),
  });
});
