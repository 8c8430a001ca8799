import type { SignatureStatus } from "../../../chain/chain.js";
import { associatedTokenAddress } from "../../tx/token-accounts.js";
import { advanceOrder, deleteUnpaidInit, type OrderRecord } from "../order-store.js";
import type { OrderKeeperOptions } from "./options.js";
import type { Settler } from "./settler.js";

/** The chain's answer for each pending intent's open transaction, as one pass read them. */
export interface OpenStatuses {
  /** The block height known just before the statuses were read. */
  heightBefore: bigint;
  bySignature: Map<string, SignatureStatus | null>;
}

/**
 * Pending orders: whether their open transaction landed (an intent's signature, an async order's or a
 * market initialization's funded escrow), failed or expired; a landed one is settled at once when it can be.
 */
export class OpeningWatch {
  constructor(
    private readonly options: OrderKeeperOptions,
    private readonly settler: Settler,
  ) {}

  /** Takes a pending order on, from the pass's reading of the intents' open transactions when it has one. */
  check(order: OrderRecord, opens?: OpenStatuses): Promise<OrderRecord | undefined> {
    if (order.kind === "init") return this.checkInitFunded(order);
    return order.kind === "async" ? this.checkFunded(order) : this.checkOpenLanded(order, opens);
  }

  /**
   * Where every pending intent's open transaction stands, read in one call for the pass: each would
   * otherwise cost a call of its own every slot (and anyone can leave refused intents pending).
   */
  async readOpens(orders: readonly OrderRecord[]): Promise<OpenStatuses | undefined> {
    const watched = orders.flatMap((order) =>
      order.status === "pending" && order.kind === "intent" && order.openSignature
        ? [order.openSignature]
        : [],
    );
    if (watched.length === 0) return undefined;
    // Read before the statuses: a transaction not landed once the chain was past its height never lands.
    const heightBefore = this.options.book.clock.blockHeight;
    const statuses = await this.options.chain.getSignatureStatuses(watched);
    return {
      heightBefore,
      bySignature: new Map(watched.map((signature, i) => [signature, statuses[i] ?? null])),
    };
  }

  /**
   * An async order: the user sends its open transaction, so the funded escrow is how the venue knows
   * it landed: all of it, the input, the fee budget and any market initialization's cost, as the open
   * transaction pays them at once. Anything less (a deposit of the tokens alone) opens nothing.
   */
  private async checkFunded(order: OrderRecord): Promise<OrderRecord | undefined> {
    const { chain, db, book } = this.options;
    const input = book.token(order.inputMint);
    if (!input) return undefined;
    const escrowAccount = associatedTokenAddress(order.escrow, input.mint, input.program);
    // Read before the balances: an open transaction not landed once the chain was past its height never
    // lands, but one landing during the reads must not be expired with the escrow funded.
    const heightBefore = book.clock.blockHeight;
    const [held, lamports] = await Promise.all([
      chain.getTokenAccount(escrowAccount),
      chain.getBalance(order.escrow),
    ]);
    const owed = order.feeBudget + BigInt(order.terms?.init?.cost ?? 0);
    if (held && held.amount >= order.inAmount && lamports >= owed) return this.landed(order, book.clock.slot);
    if (heightBefore > order.openValidHeight) return advanceOrder(db, order, { status: "expired" });
    return undefined;
  }

  /**
   * A market initialization: the payer sends it; the escrow authority holding the payment is how the
   * venue knows. One never paid is deleted once its payment can no longer land: nothing of it is left
   * to settle, and `GET /prediction-market-init` is asked for freely (its row is all it costs).
   */
  private async checkInitFunded(order: OrderRecord): Promise<OrderRecord | undefined> {
    const { chain, db, book } = this.options;
    // Read before the balance: a payment not there once the chain was past its height never lands.
    const heightBefore = book.clock.blockHeight;
    const lamports = await chain.getBalance(order.escrow);
    if (lamports >= order.inAmount + order.feeBudget) return this.landed(order, book.clock.slot);
    if (heightBefore > order.openValidHeight) await deleteUnpaidInit(db, order.id);
    return undefined;
  }

  /**
   * An intent: the venue sent its open transaction, and watches that signature land, fail or expire
   * (from the pass's reading in `opens` when it has one).
   */
  private async checkOpenLanded(order: OrderRecord, opens?: OpenStatuses): Promise<OrderRecord | undefined> {
    const { chain, db, book } = this.options;
    const signature = order.openSignature;
    if (!signature) return undefined;
    const read = opens?.bySignature.has(signature) ? opens : undefined;
    const status = read
      ? read.bySignature.get(signature)
      : (await chain.getSignatureStatuses([signature]))[0];
    if (status) {
      return status.err ? advanceOrder(db, order, { status: "failed" }) : this.landed(order, status.slot);
    }
    const height = read ? read.heightBefore : book.clock.blockHeight;
    if (height > order.openValidHeight) return advanceOrder(db, order, { status: "expired" });
    // Sent before a restart, or never: send it again (a duplicate is refused by the chain).
    if (order.openWire) await chain.sendTransaction(Buffer.from(order.openWire, "base64")).catch(() => {});
    return undefined;
  }

  /**
   * A pending order whose open transaction landed at `openSlot`: settled at once when it can be, one
   * write then recording both that it opened and its settling transaction; otherwise recorded open
   * (also when settling failed, so that its expiry runs from this slot).
   */
  private async landed(order: OrderRecord, openSlot: bigint): Promise<OrderRecord | undefined> {
    try {
      const settling = await this.settler.settle(order, openSlot);
      if (settling) return settling;
    } catch (error) {
      this.options.logger?.error({ err: error, orderId: order.id }, "settling an order failed");
    }
    return advanceOrder(this.options.db, order, { status: "open", openSlot });
  }
}
