/**
 * A running venue follows its catalogue: a market tokenized after start (by a sync or an import on
 * another instance) gets its chain accounts, on every rail, and joins the token list at the next
 * reload; markets that did not change keep theirs, and the reload names only the market that changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAddress } from "../../src/chain/base58.js";
import { loadConfig } from "../../src/config.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { saveCatalogue } from "../../src/markets/store.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { miniCatalogue, withLongRules } from "../support/fixtures.js";
import { waitUntil } from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";

const LATE = "KXHIGHNY-26NOV23-T52";
const EARLY = "KXHIGHNY-26NOV23-B47.5";

let t: TestServer;
let storage: Storage;
beforeAll(async () => {
  t = await startTestServer({ catalogue: withLongRules(miniCatalogue()) });
  storage = await openStorage(loadConfig({}, t.settings));
}, 120_000);
afterAll(async () => {
  await storage?.close();
  await t?.stop();
});

/** The ledger and outcome mints of every rail of a market, as the running catalog shows them. */
function railAccounts(ticker: string) {
  const entry = t.server.catalog.require().market(ticker);
  if (!entry) throw new Error(`no market ${ticker}`);
  return entry.addresses.rails.flatMap((rail) => [rail.marketLedger, rail.yesMint, rail.noMint]);
}

async function onChain(addresses: readonly string[]): Promise<boolean[]> {
  const accounts = await t.server.chain.chain.getMultipleAccounts(addresses.map(parseAddress));
  return accounts.map((account) => account !== null);
}

async function listedTokens(): Promise<string[]> {
  return (await fetch(`${t.url}/tokens`)).json() as Promise<string[]>;
}

describe("a market tokenized after start", () => {
  it("gets its chain accounts and joins the token list at the reload; the others keep theirs", async () => {
    const late = railAccounts(LATE);
    expect(await onChain(late)).toEqual(late.map(() => false));
    const early = railAccounts(EARLY);
    expect(await onChain(early)).toEqual(early.map(() => true));
    expect(await listedTokens()).not.toContain(late[1]);

    const file = withLongRules(miniCatalogue());
    for (const event of file.events)
      for (const market of event.markets) if (market.ticker === LATE) market.tokenized = true;
    const before = t.server.catalog.require();
    // What the reload asks the chain for: the markets whose entries changed, not every one.
    const named: string[][] = [];
    const { chain } = t.server;
    const addMarkets = chain.addMarkets.bind(chain);
    chain.addMarkets = (markets) => {
      named.push(markets.map((market) => market.marketLedger));
      return addMarkets(markets);
    };
    await saveCatalogue(storage.db, await resolveVenueSeed(storage.db, undefined), file);

    // The venue polls storage for catalogue changes every two seconds.
    await waitUntil(() => t.server.catalog.require() !== before, 10_000);
    const reloaded = t.server.catalog.require();
    expect(reloaded.market(EARLY)).toBe(before.market(EARLY));
    await waitUntil(async () => (await listedTokens()).includes(late[1] as string), 10_000);
    expect(named).toEqual([[late[0]]]);
    expect(await onChain(late)).toEqual(late.map(() => true));
    expect(await onChain(early)).toEqual(early.map(() => true));
    // Both outcome mints of both rails are listed.
    const outcomeMints = late.filter((_, index) => index % 3 !== 0);
    expect(await listedTokens()).toEqual(expect.arrayContaining(outcomeMints));
  }, 30_000);
});
