import { expect, test } from "bun:test";
import { GroupCommit } from "../../src/db/group-commit.ts";

/** A statement stand-in that records the batches it was given and refuses any batch holding "bad". */
function recording(fail?: (items: string[]) => Error | undefined) {
  const batches: string[][] = [];
  const group = new GroupCommit<string, string>({
    run: async (items) => {
      batches.push(items);
      await Bun.sleep(5);
      const e = fail?.(items);
      if (e) throw e;
      return items.map((i) => i.toUpperCase());
    },
    maxBatch: 4,
    inFlight: 1,
  });
  return { group, batches };
}

test("items submitted together share a statement, up to the batch size; each gets its own result", async () => {
  const { group, batches } = recording();
  const items = ["a", "b", "c", "d", "e", "f"];
  expect(await Promise.all(items.map((i) => group.submit(i)))).toEqual(["A", "B", "C", "D", "E", "F"]);
  expect(batches).toEqual([
    ["a", "b", "c", "d"],
    ["e", "f"],
  ]);
});

test("a lone item goes out at once, and items arriving meanwhile share the next statement", async () => {
  const { group, batches } = recording();
  const first = group.submit("a");
  await Bun.sleep(1);
  const later = ["b", "c"].map((i) => group.submit(i));
  await Promise.all([first, ...later]);
  expect(batches).toEqual([["a"], ["b", "c"]]);
});

test("a statement refused for its data is run again item by item: only the bad item fails", async () => {
  const { group, batches } = recording((items) => (items.includes("bad") ? new Error("violates a check") : undefined));
  const results = await Promise.allSettled(["a", "bad", "c"].map((i) => group.submit(i)));
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((results[1] as PromiseRejectedResult).reason.message).toBe("violates a check");
  expect(batches).toEqual([["a", "bad", "c"], ["a"], ["bad"], ["c"]]);
});

test("a failure of the database itself fails every item and is not repeated", async () => {
  const lost = Object.assign(new Error("connection lost"), { code: "ECONNRESET" });
  const { group, batches } = recording(() => lost);
  const results = await Promise.allSettled(["a", "b"].map((i) => group.submit(i)));
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(batches).toEqual([["a", "b"]]);
});
