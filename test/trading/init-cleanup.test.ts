/**
 * `GET /prediction-market-init` stores a row for the keeper to watch; one its payer never pays must
 * not stay forever. The keeper deletes an unpaid initialization once its payment can no longer land
 * (the chain was past its last valid height before the escrow's balance was read), and the rows
 * earlier versions left `expired`; every other order, and an initialization still payable, stays.
 */
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Chain } from "../../src/chain/chain.js";
import { TOKEN_PROGRAM, WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { OrderKeeper } from "../../src/trading/prediction/keeper.js";
import { insertOrder, type NewOrder } from "../../src/trading/prediction/order-store.js";
import { PoolAuthorities } from "../../src/trading/spot/pools/authority.js";
import type { ChainClock, TradingBook } from "../../src/trading/spot/trading-book.js";
import { BACKENDS } from "../support/backends.js";
import { refusingChain } from "../support/trading-api.js";

const PAYER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" as Address;
const MINT = "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R" as Address;
const authorities = new PoolAuthorities(new Uint8Array(32));

/** An order as `/prediction-market-init` (kind `init`) or another desk stores it, payable until `validHeight`. */
function order(
  id: string,
  kind: NewOrder["kind"],
  validHeight: bigint,
  openSignature: string | null = null,
): NewOrder {
  return {
    id,
    kind,
    status: "pending",
    user: PAYER,
    inputMint: kind === "init" ? WRAPPED_SOL_MINT : USDC_MINT,
    outputMint: MINT,
    inAmount: 1_000_000n,
    threshold: 0n,
    escrow: authorities.orderAuthority(id).address,
    openSignature: openSignature as NewOrder["openSignature"],
    openWire: null,
    openValidHeight: validHeight,
    expirySlots: 150,
    feeBudget: 5_000n,
    answer: null,
    terms: null,
  };
}

for (const backend of BACKENDS.filter((b) => b.available)) {
  describe(`unpaid market initializations (${backend.name})`, () => {
    let storage: Storage;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const created = await backend.create();
      cleanup = created.cleanup;
      storage = await openStorage(created.settings);
    });
    beforeEach(async () => {
      await storage.db.deleteFrom("orders").execute();
    });
    afterAll(async () => {
      await storage?.close();
      await cleanup?.();
    });

    /** A keeper over `clock`, on a chain where every escrow holds `lamports` (read by `onBalance` first). */
    function keeper(clock: ChainClock, onBalance: () => void = () => {}, lamports = 0n, knowsUsdc = false) {
      const chain = refusingChain({
        getBalance: async () => {
          onBalance();
          return lamports;
        },
        getTokenAccount: async () => null,
        // A sandbox whose state is current.
        unhealthy: () => null,
      } as Partial<Chain>);
      // Unless asked, no token is known: an async order's funding is not looked for.
      const usdc = { mint: USDC_MINT, program: TOKEN_PROGRAM };
      const token = (mint: Address) => (knowsUsdc && mint === USDC_MINT ? usdc : undefined);
      const book = { clock, followOrderEscrows: () => {}, token } as unknown as TradingBook;
      return new OrderKeeper({ db: storage.db, chain, book, authorities });
    }

    const rows = async () =>
      (await storage.db.selectFrom("orders").select(["id", "status"]).orderBy("id").execute()).map(
        (row) => `${row.id}:${row.status}`,
      );

    it("deletes an unpaid one past its height and those left expired, and keeps every other order", async () => {
      await insertOrder(storage.db, order("a-init-unpaid", "init", 100n));
      await insertOrder(storage.db, order("b-init-payable", "init", 300n));
      // Left by an earlier version, which marked an unpaid initialization expired and kept it.
      await insertOrder(storage.db, { ...order("c-init-expired", "init", 50n), status: "expired" });
      // Other orders: their rows answer /order-status, expired or not.
      await insertOrder(storage.db, {
        ...order("d-intent-expired", "intent", 50n, "sig-d"),
        status: "expired",
      });
      await insertOrder(storage.db, order("e-async-unpaid", "async", 100n));
      const clock = { slot: 500n, blockHeight: 200n } as ChainClock;
      await keeper(clock).tick();
      expect(await rows()).toEqual([
        "b-init-payable:pending",
        "d-intent-expired:expired",
        "e-async-unpaid:pending",
      ]);
    });

    it("keeps an unpaid one whose height passed only while its escrow's balance was read: it may have landed", async () => {
      await insertOrder(storage.db, order("f-init-racing", "init", 100n));
      const clock = { slot: 500n, blockHeight: 100n } as ChainClock;
      // The chain passes the height while the balance is read: the payment could have landed just before.
      await keeper(clock, () => {
        clock.blockHeight = 101n;
      }).tick();
      expect(await rows()).toEqual(["f-init-racing:pending"]);
      // The next pass reads the height first: past it, and still unpaid, the payment can never land.
      await keeper(clock).tick();
      expect(await rows()).toEqual([]);
    });

    it("keeps an async order pending whose height passed only while its escrow was read, then expires it", async () => {
      await insertOrder(storage.db, order("g-async-racing", "async", 100n));
      const clock = { slot: 500n, blockHeight: 100n } as ChainClock;
      await keeper(
        clock,
        () => {
          clock.blockHeight = 101n;
        },
        0n,
        true,
      ).tick();
      expect(await rows()).toEqual(["g-async-racing:pending"]);
      await keeper(clock, () => {}, 0n, true).tick();
      expect(await rows()).toEqual(["g-async-racing:expired"]);
    });
  });
}
