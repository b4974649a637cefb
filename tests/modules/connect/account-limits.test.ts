/**
 * Account caps per profile (crier profiles set-limits --accounts), the upstream's 403
 * account_limit_reached: refused at the connect call, refused on the page of a flow that completes over
 * the cap, never counting a reconnect twice, and not counting disconnected accounts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { adminCommands } from "../../../src/cli/commands.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../../support/connect-kit.ts";

let h: ListeningHarness;
let token: string;
let profileId: string;

beforeAll(async () => {
  h = await listeningHarness();
  ({ token, profileId } = await h.profile({ sandbox: true }));
});
afterAll(() => h.stop());

const setLimit = (accounts: number | null) => adminCommands["profiles.set-limits"](h.ctx, { profileId, accounts });
const start = (platform: string) => h.request("POST", `/v1/accounts/connect/${platform}`, { token });
const connectBluesky = async (handle: string) => {
  const res = await start("bluesky");
  expect(res.status).toBe(201);
  return submitHostedForm(res.body.data.hosted_url, { handle });
};
const accounts = async () => (await h.request("GET", "/v1/accounts", { token })).body.data as any[];

test("at the cap, starting a connect for a platform the profile does not have is 403 account_limit_reached", async () => {
  await setLimit(1);
  expect((await connectBluesky("alice.test")).html).toContain("Account connected");
  const res = await start("twitter");
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe("account_limit_reached");
  expect(res.body.error.message).toContain("limit of 1 connected account");
  expect(res.body.error.hint).toContain("set-limits --accounts");
});

test("reconnecting an account the profile already has never counts twice", async () => {
  const page = await connectBluesky("alice.test");
  expect(page.html).toContain("Account connected");
  expect((await accounts()).filter((a) => a.status !== "disconnected")).toHaveLength(1);
});

test("a flow that completes with a new account over the cap is refused on its page with the same words", async () => {
  const page = await connectBluesky("bob.test");
  expect(page.status).toBe(403);
  expect(page.html).toContain("limit of 1 connected account");
  expect((await accounts()).map((a) => a.username)).not.toContain("bob.test");
});

test("a flow started before the cap was reached is refused when it completes after", async () => {
  await setLimit(2);
  const begun = await start("bluesky");
  expect(begun.status).toBe(201);
  expect((await connectBluesky("carol.test")).html).toContain("Account connected");
  const late = await submitHostedForm(begun.body.data.hosted_url, { handle: "dave.test" });
  expect(late.status).toBe(403);
  expect(late.html).toContain("limit of 2 connected accounts");
});

test("disconnected accounts do not count; unlimited clears the cap; profiles list shows it", async () => {
  const carol = (await accounts()).find((a) => a.username === "carol.test");
  expect((await h.request("DELETE", `/v1/accounts/${carol.id}`, { token })).status).toBe(200);
  expect((await connectBluesky("dave.test")).html).toContain("Account connected");
  const listed = (await adminCommands["profiles.list"](h.ctx)).find((p) => p.id === profileId);
  expect(listed?.accounts_limit).toBe(2);
  await setLimit(null);
  expect((await start("twitter")).status).toBe(201);
  expect((await adminCommands["profiles.list"](h.ctx)).find((p) => p.id === profileId)?.accounts_limit).toBe(
    "unlimited",
  );
});
