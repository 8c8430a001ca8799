import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  type Signature,
} from "@solana/kit";
import {
  AddressLookupTableAccount,
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  type VersionedAccountsModeBlockResponse,
  VersionedTransaction,
} from "@solana/web3.js";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faucet } from "../../src/chain/faucet.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage } from "../../src/storage/database.js";
import { BACKENDS, type BackendSettings } from "../support/backends.js";
import { solTransfer, startTestChain, type TestChain } from "./harness.js";

// One raw JSON-RPC call: the error object as a node answers it, or the result.
async function rpcCall(url: string, method: string, params: unknown[]) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
}

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`wallet history and blocks on ${backend.name}`, () => {
    const clock = new ManualClock();
    let settings: BackendSettings;
    let cleanup: () => Promise<void>;
    let chain: TestChain;
    let connection: Connection;
    let alice: KeyPairSigner;
    let bob: KeyPairSigner;
    // Bob's history as sent, oldest first: the signature and the slot each landed in.
    const sent: { signature: Signature; slot: number }[] = [];

    const start = async () => {
      // A step of the history index every 3 transactions (which do not divide the 8 the setup lands):
      // what is read crosses merged and recent rows.
      chain = await startTestChain(settings, { clock, historyMergeEvery: 3 });
      connection = new Connection(chain.rpcUrl, "confirmed");
    };
    const transfer = async (lamports: bigint) => {
      const signature = await chain.chain.sendTransaction(
        await solTransfer(chain.chain, alice, bob.address, lamports),
      );
      sent.push({ signature, slot: Number(await chain.chain.getSlot()) });
      return signature;
    };

    beforeAll(async () => {
      ({ settings, cleanup } = await backend.create());
      await start();
      alice = await generateKeyPairSigner();
      bob = await generateKeyPairSigner();
      await chain.chain.requestAirdrop(alice.address, 10_000_000_000n);
      await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 5n);
      clock.advanceSlots(1);
      for (const lamports of [1_000_000n, 1_000_001n]) {
        await transfer(lamports);
        clock.advanceSlots(2);
      }
      // Three in one slot: the block's order is the order they executed.
      for (const lamports of [2_000_000n, 2_000_001n, 2_000_002n]) await transfer(lamports);
      clock.advanceSlots(3);
      await transfer(3_000_000n);
      clock.advanceSlots(1);
    });
    afterAll(async () => {
      await chain?.stop();
      await cleanup?.();
    });

    it("lists a wallet's transactions newest first, paged by before, until and limit (web3.js)", async () => {
      const bobKey = new PublicKey(bob.address);
      const all = await connection.getSignaturesForAddress(bobKey);
      // Bob's faucet grant first, then every transfer to him.
      expect(all.map((entry) => entry.signature).slice(0, sent.length)).toEqual(
        sent.map((entry) => entry.signature).reverse(),
      );
      expect(all).toHaveLength(sent.length + 1);
      // Read across both parts of the index: rows already merged, and the newest not yet.
      const rowsIn = async (table: "chain_recent_history" | "chain_address_transactions") =>
        Number(
          (
            await chain.storage.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as("rows"))
              .executeTakeFirstOrThrow()
          ).rows,
        );
      expect(await rowsIn("chain_address_transactions")).toBeGreaterThan(0);
      expect(await rowsIn("chain_recent_history")).toBeGreaterThan(0);
      const newest = all[0];
      expect(newest).toMatchObject({ err: null, memo: null, confirmationStatus: "finalized" });
      expect(newest?.slot).toBe(sent.at(-1)?.slot);
      expect(newest?.blockTime).toBe(await connection.getBlockTime(newest?.slot ?? -1));
      // The faucet's grant carries an SPL memo, formatted as Agave formats it.
      expect(all.at(-1)?.memo).toMatch(/^\[\d+\] \S+/);

      const pages: string[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await connection.getSignaturesForAddress(bobKey, { before, limit: 2 });
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(2);
        pages.push(...page.map((entry) => entry.signature));
        before = page.at(-1)?.signature;
      }
      expect(pages).toEqual(all.map((entry) => entry.signature));

      // until is exclusive; before and until together cut a window across the one busy slot.
      const until = all[4]?.signature;
      const window = await connection.getSignaturesForAddress(bobKey, { before: all[0]?.signature, until });
      expect(window.map((entry) => entry.signature)).toEqual(all.slice(1, 4).map((entry) => entry.signature));
      // A before that never landed: an empty page, as Agave's blockstore answers.
      const unknown = (await generateKeyPairSigner()).address;
      expect(await connection.getSignaturesForAddress(new PublicKey(unknown))).toEqual([]);
    });

    it("refuses what Agave refuses: limit 1001, processed commitment, a malformed address", async () => {
      const limit = await rpcCall(chain.rpcUrl, "getSignaturesForAddress", [bob.address, { limit: 1001 }]);
      expect(limit.error).toEqual({ code: -32602, message: "Invalid limit; max 1000" });
      const zero = await rpcCall(chain.rpcUrl, "getSignaturesForAddress", [bob.address, { limit: 0 }]);
      expect(zero.error?.code).toBe(-32602);
      const processed = await rpcCall(chain.rpcUrl, "getSignaturesForAddress", [
        bob.address,
        { commitment: "processed" },
      ]);
      expect(processed.error?.message).toBe("Method does not support commitment below `confirmed`");
      const malformed = await rpcCall(chain.rpcUrl, "getSignaturesForAddress", ["not-an-address"]);
      expect(malformed.error?.code).toBe(-32602);
      const ahead = await rpcCall(chain.rpcUrl, "getSignaturesForAddress", [
        bob.address,
        { minContextSlot: 1e12 },
      ]);
      expect(ahead.error?.code).toBe(-32016);
    });

    it("answers blocks with and without transactions, in every detail level (web3.js)", async () => {
      const busySlot = sent[2]?.slot ?? -1;
      const block = await connection.getBlock(busySlot, { maxSupportedTransactionVersion: 0 });
      expect(block?.transactions.map((tx) => tx.transaction.signatures[0])).toEqual(
        sent.slice(2, 5).map((entry) => entry.signature),
      );
      expect(block?.transactions[0]?.version).toBe(0);
      expect(block?.parentSlot).toBe(busySlot - 1);
      expect((block as unknown as { blockHeight: number } | null)?.blockHeight).toBe(busySlot);
      const parent = await connection.getBlock(busySlot - 1, { maxSupportedTransactionVersion: 0 });
      expect(parent?.transactions).toEqual([]);
      expect(block?.previousBlockhash).toBe(parent?.blockhash);
      expect(parent?.rewards).toEqual([]);

      // getBlockSignatures asks for transactionDetails "signatures" without rewards.
      const signatures = await connection.getBlockSignatures(busySlot);
      expect(signatures.signatures).toEqual(sent.slice(2, 5).map((entry) => entry.signature));
      // web3.js types this call by its first matching overload, not the accounts mode's.
      const accounts = (await connection.getBlock(busySlot, {
        maxSupportedTransactionVersion: 0,
        transactionDetails: "accounts",
      })) as unknown as VersionedAccountsModeBlockResponse | null;
      const keys = accounts?.transactions[0]?.transaction.accountKeys;
      expect({ ...keys?.[0], pubkey: String(keys?.[0]?.pubkey) }).toMatchObject({
        pubkey: alice.address,
        signer: true,
        writable: true,
        source: "transaction",
      });
      expect(keys?.some((key) => String(key.pubkey) === bob.address && key.writable && !key.signer)).toBe(
        true,
      );
      const none = await connection.getBlock(busySlot, {
        maxSupportedTransactionVersion: 0,
        transactionDetails: "none",
      });
      expect(none?.blockhash).toBe(block?.blockhash);

      const base64 = await rpcCall(chain.rpcUrl, "getBlock", [
        busySlot,
        { encoding: "base64", maxSupportedTransactionVersion: 0 },
      ]);
      const first = (base64.result as { transactions: { transaction: [string, string] }[] }).transactions[0];
      expect(first?.transaction[1]).toBe("base64");
    });

    it("refuses blocks as Agave does: a v0 transaction without maxSupportedTransactionVersion, a future slot", async () => {
      const v0 = await rpcCall(chain.rpcUrl, "getBlock", [sent[0]?.slot]);
      expect(v0.error?.code).toBe(-32015);
      const future = Number(await chain.chain.getSlot()) + 1000;
      expect((await rpcCall(chain.rpcUrl, "getBlock", [future])).error).toEqual({
        code: -32004,
        message: `Block not available for slot ${future}`,
      });
      expect((await rpcCall(chain.rpcUrl, "getBlockTime", [future])).error?.code).toBe(-32004);
      const wide = await rpcCall(chain.rpcUrl, "getBlocks", [0, 600_000]);
      expect(wide.result).toEqual(
        Array.from({ length: Number(await chain.chain.getSlot()) + 1 }, (_, i) => i),
      );
      const tooMany = await rpcCall(chain.rpcUrl, "getBlocksWithLimit", [0, 500_001]);
      expect(tooMany.error).toEqual({ code: -32602, message: "Limit too large; max 500000" });
    });

    it("lists blocks, leaders, production and samples (web3.js)", async () => {
      const slot = await connection.getSlot();
      expect(await connection.getBlocks(slot - 3, slot)).toEqual([slot - 3, slot - 2, slot - 1, slot]);
      expect(await connection.getBlocks(slot - 1)).toEqual([slot - 1, slot]);
      expect(await connection.getFirstAvailableBlock()).toBe(0);
      const leader = await connection.getSlotLeader();
      // This node leads every slot: the identity getIdentity names.
      expect(leader).toBe((await createSolanaRpc(chain.rpcUrl).getIdentity().send()).identity);
      expect(await connection.getSlotLeaders(slot, 3)).toEqual(
        [leader, leader, leader].map((l) => new PublicKey(l)),
      );
      const schedule = await connection.getLeaderSchedule();
      expect(schedule[leader]?.length).toBe(432_000);
      const production = await connection.getBlockProduction();
      expect(production.value.byIdentity[leader]).toEqual([slot + 1, slot + 1]);
      expect(production.value.range).toEqual({ firstSlot: 0, lastSlot: slot });

      // A whole 60 s window (150 slots) later, the first sample counts every transaction sent.
      clock.advanceSlots(150);
      const samples = await connection.getRecentPerformanceSamples();
      const total = samples.reduce((sum, sample) => sum + sample.numTransactions, 0);
      expect(samples[0]).toMatchObject({ numSlots: 150, samplePeriodSecs: 60 });
      expect(total).toBe(await connection.getTransactionCount());
      expect((await rpcCall(chain.rpcUrl, "getRecentPerformanceSamples", [721])).error?.code).toBe(-32602);
    });

    it("answers @solana/kit's history calls", async () => {
      const rpc = createSolanaRpc(chain.rpcUrl);
      const history = await rpc.getSignaturesForAddress(bob.address, { limit: 3 }).send();
      expect(history.map((entry) => entry.signature)).toEqual(
        sent
          .slice(-3)
          .map((entry) => entry.signature)
          .reverse(),
      );
      const slot = history[0]?.slot ?? 0n;
      const block = await rpc
        .getBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: "signatures" })
        .send();
      expect(block?.signatures).toEqual([history[0]?.signature]);
      expect(await rpc.getBlocksWithLimit(slot, 2).send()).toEqual([slot, slot + 1n]);
      const samples = await rpc.getRecentPerformanceSamples(1).send();
      expect(samples).toHaveLength(1);
      const schedule = await rpc.getLeaderSchedule(null, { identity: bob.address as Address }).send();
      expect(schedule).toEqual({});
    });

    it("indexes the accounts a v0 transaction loads from a lookup table", async () => {
      const payer = Keypair.generate();
      await chain.chain.requestAirdrop(payer.publicKey.toBase58() as Address, 1_000_000_000n);
      const loaded = Keypair.generate().publicKey;
      const table = Keypair.generate().publicKey;
      await chain.chain.installAccounts([
        {
          address: table.toBase58(),
          lamports: 10_000_000n,
          owner: "AddressLookupTab1e1111111111111111111111111",
          executable: false,
          data: lookupTableData(payer.publicKey, [loaded]),
        },
      ]);
      clock.advanceSlots(1);
      const lookupTable = new AddressLookupTableAccount({
        key: table,
        state: {
          deactivationSlot: BigInt("18446744073709551615"),
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          authority: payer.publicKey,
          addresses: [loaded],
        },
      });
      const { blockhash } = await connection.getLatestBlockhash();
      const message = new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: loaded, lamports: 1_000_000 }),
        ],
      }).compileToV0Message([lookupTable]);
      expect(message.addressTableLookups).toHaveLength(1);
      const tx = new VersionedTransaction(message);
      tx.sign([payer]);
      const signature = await connection.sendRawTransaction(tx.serialize());
      const history = await connection.getSignaturesForAddress(loaded);
      expect(history.map((entry) => entry.signature)).toEqual([signature]);
    });

    it("keeps the history across a restart, and numbers new transactions after it", async () => {
      const bobKey = new PublicKey(bob.address);
      const before = await connection.getSignaturesForAddress(bobKey);
      await chain.stop();
      await start();
      expect(await connection.getSignaturesForAddress(bobKey)).toEqual(before);
      const next = await transfer(4_000_000n);
      const after = await connection.getSignaturesForAddress(bobKey, { limit: 2 });
      expect(after.map((entry) => entry.signature)).toEqual([next, before[0]?.signature]);
    });

    it("indexes transactions stored before the index existed (migration backfill)", async () => {
      const bobKey = new PublicKey(bob.address);
      const expected = await connection.getSignaturesForAddress(bobKey);
      await chain.stop();
      // Undo migrations 0013 to 0019 as if this database predated them; reopening runs them again.
      const storage = await openStorage(settings);
      const schema = storage.db.schema;
      await schema.dropTable("chain_recent_history").execute();
      await schema.alterTable("orders").dropColumn("upstream").execute();
      await schema.dropIndex("orders_sweep_after").execute();
      await schema.alterTable("orders").dropColumn("sweep_after").execute();
      await schema.dropTable("chain_address_transactions").execute();
      await schema.dropTable("chain_addresses").execute();
      await schema.dropIndex("chain_transactions_position").execute();
      await schema.alterTable("chain_transactions").dropColumn("position").execute();
      await schema.createIndex("chain_transactions_slot").on("chain_transactions").column("slot").execute();
      await schema.alterTable("chain_transactions").dropColumn("meta").execute();
      await sql`delete from kysely_migration where name in ('0013_signatures_by_address', '0014_transaction_meta', '0015_address_ids', '0016_escrow_sweep', '0017_upstream_fills', '0018_recent_history', '0019_recent_history_per_transaction')`.execute(
        storage.db,
      );
      await storage.close();
      await start();
      // The same history; within a slot, rows stored before the index are ordered by signature.
      const backfilled = await connection.getSignaturesForAddress(bobKey);
      const bySlotThenSignature = (list: typeof expected) =>
        [...list].sort((a, b) => b.slot - a.slot || a.signature.localeCompare(b.signature));
      expect(bySlotThenSignature(backfilled)).toEqual(bySlotThenSignature(expected));
      expect(backfilled.map((entry) => entry.slot)).toEqual(expected.map((entry) => entry.slot));
      const next = await transfer(5_000_000n);
      expect((await connection.getSignaturesForAddress(bobKey, { limit: 1 }))[0]?.signature).toBe(next);
    });

    it("keeps the newest history of a database that stored it per address (migration 0019)", async () => {
      const bobKey = new PublicKey(bob.address);
      const recentRows = () => chain.storage.db.selectFrom("chain_recent_history").selectAll().execute();
      for (let lamports = 6_000_000n; (await recentRows()).length === 0; lamports++) await transfer(lamports);
      const expected = await connection.getSignaturesForAddress(bobKey);
      const recent = await recentRows();
      await chain.stop();
      // Back to 0018's shape, one row per address of each recent transaction, as if this database
      // predated 0019; reopening runs it again.
      const storage = await openStorage(settings);
      const db = storage.db;
      await db.schema.dropTable("chain_recent_history").execute();
      await sql`create table "chain_recent_history" ("position" bigint not null, "address" varchar(44) not null, "slot" bigint not null, primary key ("position", "address"))`.execute(
        db,
      );
      for (const row of recent) {
        for (const address of JSON.parse(row.addresses) as string[]) {
          await sql`insert into "chain_recent_history" values (${Number(row.position)}, ${address}, ${Number(row.slot)})`.execute(
            db,
          );
        }
      }
      await sql`delete from kysely_migration where name = '0019_recent_history_per_transaction'`.execute(db);
      await storage.close();
      await start();
      expect(await connection.getSignaturesForAddress(bobKey)).toEqual(expected);
      const next = await transfer(7_000_000n);
      expect((await connection.getSignaturesForAddress(bobKey, { limit: 1 }))[0]?.signature).toBe(next);
    });
  });
}

// An address lookup table's account data: its 56-byte header (active, authority set), then the addresses.
function lookupTableData(authority: PublicKey, addresses: PublicKey[]): Uint8Array {
  const data = new Uint8Array(56 + 32 * addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true);
  data[21] = 1;
  data.set(authority.toBytes(), 22);
  addresses.forEach((address, i) => {
    data.set(address.toBytes(), 56 + 32 * i);
  });
  return data;
}
