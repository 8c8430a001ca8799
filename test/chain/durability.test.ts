import { type Address, generateKeyPairSigner, type Signature } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { faucet } from "../../src/chain/faucet.js";
import type { GenesisMarket } from "../../src/chain/market-ledger.js";
import { ChainStore } from "../../src/chain/sandbox/chain-store.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { BACKENDS } from "../support/backends.js";
import { startTestChain, TEST_MARKETS, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`sandbox chain durability on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it("rebuilds exactly the committed state after a restart, and keeps refusing replays", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      let chain: TestChain = await startTestChain(settings);
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
      await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 100n);
      await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 1n);
      const transfers = await Promise.all(
        [1n, 2n, 3n].map((amount) => usdcTransfer(chain.chain, alice, bob.address, amount)),
      );
      const signatures = await Promise.all(transfers.map((wire) => chain.chain.sendTransaction(wire)));
      const before = {
        alice: await chain.chain.getTokenAccount(await usdcAccountOf(alice.address)),
        bob: await chain.chain.getTokenAccount(await usdcAccountOf(bob.address)),
        sol: await chain.chain.getBalance(alice.address),
        supply: (await chain.chain.getMint(USDC_MINT))?.supply,
      };
      const keysBefore = chain.venueKeys.treasury.address;
      await chain.stop();

      chain = await startTestChain(settings);
      cleanups.push(() => chain.stop());
      expect(chain.venueKeys.treasury.address).toBe(keysBefore);
      expect(await chain.chain.getTokenAccount(await usdcAccountOf(alice.address))).toEqual(before.alice);
      expect(await chain.chain.getTokenAccount(await usdcAccountOf(bob.address))).toEqual(before.bob);
      expect(before.bob?.amount).toBe(7n);
      expect(await chain.chain.getBalance(alice.address)).toBe(before.sol);
      expect((await chain.chain.getMint(USDC_MINT))?.supply).toBe(before.supply);
      const statuses = await chain.chain.getSignatureStatuses(signatures);
      expect(statuses.every((status) => status !== null && status.err === null)).toBe(true);
      const record = await chain.chain.getTransaction(signatures[0] as Signature);
      expect(record?.wire).toEqual(transfers[0]);
      await expect(chain.chain.sendTransaction(transfers[0] as Uint8Array)).rejects.toMatchObject({
        code: -32002,
        kind: "AlreadyProcessed",
      });

      // Genesis is idempotent, and markets tokenized later get their accounts.
      expect(await chain.addMarkets(TEST_MARKETS)).toBe(0);
      const later = {
        marketLedger: "3Mnn2fX6rQyUsyELYms1sBJyChWofzSNRoqYzvgMVz5E",
        yesMint: "8HoQnePLqPj4M7PUDzfw8e3Ymdwgc7NLGnaTUapubyvu",
        noMint: "5ZWj7a1f8tWkjBESHKgrLmXshuXxqeY9SYcfbshpAqPG",
      };
      expect(await chain.addMarkets([...TEST_MARKETS, later])).toBe(3);
      // A rail already deferred is skipped unchecked; one naming a new address is checked, however much
      // of it is deferred already.
      expect(await chain.addMarkets([...TEST_MARKETS, later])).toBe(0);
      await expect(chain.addMarkets([{ ...later, noMint: "0OIl-not-base58" }])).rejects.toMatchObject({
        name: "Base58Error",
      });
      const yes = await chain.chain.getMint(later.yesMint as Address);
      expect(yes).toMatchObject({ programId: "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", decimals: 6 });
      expect(yes?.mintAuthority).toBe(chain.venueKeys.mintAuthority.address);
    });

    it("defers each market's accounts: readable at once, stored only once a transaction writes them", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      let chain: TestChain = await startTestChain(settings);
      const market = TEST_MARKETS[0] as GenesisMarket;
      const stored = async () =>
        new Set((await new ChainStore(chain.storage.db).loadAccounts()).map((account) => account.address));
      expect(await stored()).not.toContain(market.yesMint);
      expect(await stored()).not.toContain(market.marketLedger);
      // Every reader sees the pristine accounts: the Chain interface and JSON-RPC clients alike.
      const no = await chain.chain.getMint(market.noMint as Address);
      expect(no).toMatchObject({
        supply: 0n,
        decimals: 6,
        mintAuthority: chain.venueKeys.mintAuthority.address,
      });
      const rpc = await fetch(chain.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "getAccountInfo",
          params: [market.marketLedger, { encoding: "base64" }],
        }),
      });
      const ledger = ((await rpc.json()) as { result: { value: { owner: string } | null } }).result.value;
      expect(ledger?.owner).toBe(chain.venueKeys.mintAuthority.address);
      expect(await chain.chain.getBalance(market.yesMint as Address)).toBeGreaterThan(0n);

      // A transaction that names one creates it; what it writes is committed like any account.
      const alice = await generateKeyPairSigner();
      await faucet(chain.chain, chain.signers, alice.address, market.yesMint as Address, 5_000_000n);
      expect((await chain.chain.getMint(market.yesMint as Address))?.supply).toBe(5_000_000n);
      expect(await stored()).toContain(market.yesMint);
      expect(await stored()).not.toContain(market.noMint);
      await chain.stop();

      chain = await startTestChain(settings);
      cleanups.push(() => chain.stop());
      expect((await chain.chain.getMint(market.yesMint as Address))?.supply).toBe(5_000_000n);
      expect((await chain.chain.getMint(market.noMint as Address))?.supply).toBe(0n);
      await faucet(chain.chain, chain.signers, alice.address, market.noMint as Address, 1n);
      expect((await chain.chain.getMint(market.noMint as Address))?.supply).toBe(1n);
      expect((await chain.chain.getMint(market.yesMint as Address))?.supply).toBe(5_000_000n);
    });
  });
}
