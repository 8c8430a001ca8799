/**
 * The order keeper: moves every escrowed order to its end, exactly once. Each step is a
 * compare-and-set in storage, and a settling transaction is recorded (signature, wire, last valid
 * height, plan) before it is sent, so after a crash the keeper finds it, sends it again while it can
 * still land, and builds another only once it no longer can. The escrow itself can be spent only
 * once, so a fill and a refund can never both land.
 *
 *   pending ──open tx lands──▶ open ──fill or refund recorded──▶ pendingClose ──it lands──▶ closed
 *      │ │ open tx fails: failed         ▲ it can no longer land ───────┘
 *      │ └ never lands before its height: expired
 *      └──open tx landed and the fill or refund recorded with it (one write)──▶ pendingClose
 */
import type { Address } from "@solana/kit";
import bs58 from "bs58";
import type { Kysely } from "kysely";
import type { Chain } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import { USDC_MINT } from "../../contract/markets.js";
import type { Tables } from "../../storage/database.js";
import type { BookLogger, TradingBook } from "../book.js";
import { SLOT_MS } from "../book.js";
import type { PoolAuthorities } from "../pools/authority.js";
import type { TokenRecord } from "../pools/store.js";
import { checkVenueSignatures } from "../signing-guard.js";
import { associatedTokenAddress } from "../token-accounts.js";
import { CPMM_VENUE, type CpmmPool } from "../venues/cpmm-pool.js";
import { settleTransaction } from "./escrow.js";
import { predictionSettleTransaction, type VenueSigningKeys } from "./prediction-orders.js";
import { activeOrders, advanceOrder, type ClosePlan, type OrderRecord, orderById } from "./store.js";

export interface OrderKeeperOptions {
  db: Kysely<Tables>;
  chain: Chain;
  book: TradingBook;
  authorities: PoolAuthorities;
  /** The venue's mint authority and treasury (sandbox only): without them prediction orders only refund. */
  venue?: VenueSigningKeys;
  logger?: BookLogger;
}

export class OrderKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly busy = new Set<string>();

  constructor(private readonly options: OrderKeeperOptions) {}

  /** Works through the active orders every slot (and at once, to resume what a restart left). */
  start(): void {
    const tick = () => {
      this.running = this.tick()
        .catch((error: unknown) => this.options.logger?.error({ err: error }, "order keeper tick failed"))
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.timer = setTimeout(tick, SLOT_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** An order (as just stored) whose open transaction just landed: settle it now rather than at the next tick. */
  opened(order: OrderRecord): void {
    void this.advance(order).catch((error: unknown) =>
      this.options.logger?.error({ err: error, orderId: order.id }, "settling an order failed"),
    );
  }

  /** One pass over every active order. */
  async tick(): Promise<void> {
    for (const order of await activeOrders(this.options.db)) await this.advance(order);
  }

  /** Takes one order one or more steps on; never works on the same order twice at once. */
  private async advance(order: OrderRecord): Promise<void> {
    if (this.busy.has(order.id)) return;
    this.busy.add(order.id);
    try {
      // Each step returns the order as it stored it, so the next one needs no read.
      let current: OrderRecord | undefined = order;
      for (let steps = 0; current && steps < 4; steps++) current = await this.step(current);
    } finally {
      this.busy.delete(order.id);
    }
  }

  /** Returns the order as changed, or undefined when it did not change. */
  private async step(order: OrderRecord): Promise<OrderRecord | undefined> {
    switch (order.status) {
      case "pending":
        return this.checkOpen(order);
      case "open":
        return this.settle(order);
      case "pendingClose":
        return this.checkClose(order);
      default:
        return undefined;
    }
  }

  private async checkOpen(order: OrderRecord): Promise<OrderRecord | undefined> {
    const { chain, db, book } = this.options;
    if (order.kind === "async") {
      // The user sends an async order's open transaction: the funded escrow is how the venue knows.
      const input = book.token(order.inputMint as Address);
      if (!input) return undefined;
      const escrowAccount = await associatedTokenAddress(order.escrow as Address, input.mint, input.program);
      const held = await chain.getTokenAccount(escrowAccount);
      if (held && held.amount >= order.inAmount) return this.openLanded(order, book.clock.slot);
      if (book.clock.blockHeight > order.openValidHeight) {
        return advanceOrder(db, order, { status: "expired" });
      }
      return undefined;
    }
    if (!order.openSignature) return undefined;
    const [status] = await chain.getSignatureStatuses([order.openSignature as never]);
    if (status) {
      return status.err ? advanceOrder(db, order, { status: "failed" }) : this.openLanded(order, status.slot);
    }
    if (this.options.book.clock.blockHeight > order.openValidHeight) {
      return advanceOrder(db, order, { status: "expired" });
    }
    // Sent before a restart, or never: send it again (a duplicate is refused by the chain).
    if (order.openWire) await chain.sendTransaction(Buffer.from(order.openWire, "base64")).catch(() => {});
    return undefined;
  }

  /**
   * A pending order whose open transaction landed at `openSlot`: settled at once when it can be, one
   * write then recording both that it opened and its settling transaction; otherwise recorded open
   * (also when settling failed, so that its expiry runs from this slot).
   */
  private async openLanded(order: OrderRecord, openSlot: bigint): Promise<OrderRecord | undefined> {
    try {
      const settling = await this.settle(order, openSlot);
      if (settling) return settling;
    } catch (error) {
      this.options.logger?.error({ err: error, orderId: order.id }, "settling an order failed");
    }
    return advanceOrder(this.options.db, order, { status: "open", openSlot });
  }

  /**
   * Fills the order at the best price now if that meets its threshold; refunds it once expired.
   * `opening` is the slot a pending order's open transaction landed in, recorded with the settlement.
   */
  private async settle(order: OrderRecord, opening?: bigint): Promise<OrderRecord | undefined> {
    const { book, chain, db, authorities } = this.options;
    const input = book.token(order.inputMint as Address);
    const output = book.token(order.outputMint as Address);
    if (!input || !output) return undefined;
    const clock = book.clock;
    const openSlot = opening ?? order.openSlot ?? 0n;
    const expired = clock.slot > openSlot + BigInt(order.expirySlots);
    const escrow = authorities.orderAuthority(order.id);
    const escrowAccount = await associatedTokenAddress(escrow.address, input.mint, input.program);
    const [held, lamports] = await Promise.all([
      chain.getTokenAccount(escrowAccount),
      chain.getBalance(escrow.address),
    ]);
    if (!held) {
      // Usually `order` is a stale copy (a tick's list, read before this order was settled and its
      // escrow closed); only an order still stored as it was means something is wrong.
      const stored = await orderById(db, order.id);
      if (stored?.status === order.status) {
        this.options.logger?.error({ orderId: order.id }, "an open order's escrow is missing");
      }
      return undefined;
    }
    if (order.kind === "async") {
      return this.settlePrediction(order, {
        input,
        output,
        expired,
        escrow,
        held: held.amount,
        lamports,
        ...(opening !== undefined ? { opening } : {}),
      });
    }
    let fill:
      | { legs: CpmmPool[]; route: NonNullable<ReturnType<TradingBook["graph"]["bestRoute"]>> }
      | undefined;
    if (!expired) {
      const route = book.graph.bestRoute({
        inputMint: input.mint,
        outputMint: output.mint,
        amount: order.inAmount,
        maxLegs: 2,
        venues: new Set([CPMM_VENUE]),
      });
      if (!route || route.outAmount < order.threshold) return undefined; // wait for a better price, or expiry
      fill = { legs: route.legs.map((leg) => leg.market as CpmmPool), route };
    }
    const plan: ClosePlan = fill
      ? {
          fill: {
            inputMint: input.mint,
            inAmount: fill.route.inAmount.toString(),
            outputMint: output.mint,
            outAmount: fill.route.outAmount.toString(),
          },
          revert:
            held.amount > fill.route.inAmount
              ? { mint: input.mint, amount: (held.amount - fill.route.inAmount).toString() }
              : null,
        }
      : { fill: null, revert: { mint: input.mint, amount: held.amount.toString() } };
    const { wire, signature } = await settleTransaction({
      escrow,
      user: order.user as Address,
      input,
      output,
      escrowAmount: held.amount,
      escrowLamports: lamports,
      ...(fill ? { fill: { legs: fill.route.legs, userOut: fill.route.outAmount } } : {}),
      blockhash: clock.latest.blockhash,
    });
    // The escrow is the venue's own key here, so the settlement is checked like any transaction it signs.
    checkVenueSignatures(
      wire,
      {
        payer: escrow.address,
        payerSignedByVenue: true,
        legs: (fill?.route.legs ?? []).map((leg, index) => ({
          pool: fill?.legs[index] as CpmmPool,
          inputMint: leg.inputMint,
          inAmount: leg.inAmount,
          outputMint: leg.outputMint,
          maxOut: leg.outAmount,
        })),
      },
      book,
    );
    const holds = fill
      ? fill.route.legs.map((leg, index) =>
          (fill.legs[index] as CpmmPool).reserve(
            leg.outputMint,
            leg.outAmount,
            clock.latest.lastValidBlockHeight,
          ),
        )
      : [];
    const close = {
      signature: bs58.encode(signature),
      wire: Buffer.from(wire).toString("base64"),
      validHeight: clock.latest.lastValidBlockHeight,
      plan,
    };
    const closing = await advanceOrder(db, order, {
      status: "pendingClose",
      close,
      ...(opening !== undefined ? { openSlot: opening } : {}),
    });
    if (!closing) {
      for (const hold of holds) hold.release();
      return undefined;
    }
    await chain.sendTransaction(wire).catch((error: unknown) => {
      for (const hold of holds) hold.release();
      this.options.logger?.info({ err: error, orderId: order.id }, "a settling transaction was refused");
    });
    return closing;
  }

  /** Settles a prediction-market order against the venue: at the book's price now, or refunded once expired. */
  private async settlePrediction(
    order: OrderRecord,
    state: {
      input: TokenRecord;
      output: TokenRecord;
      expired: boolean;
      escrow: Keypair;
      held: bigint;
      lamports: bigint;
      /** As in `settle`. */
      opening?: bigint;
    },
  ): Promise<OrderRecord | undefined> {
    const { book, chain, db, venue } = this.options;
    let fill: { inAmount: bigint; outAmount: bigint } | undefined;
    if (!state.expired) {
      const outcome = state.input.mint === USDC_MINT ? state.output.mint : state.input.mint;
      await book.prediction?.prepare([outcome]);
      const quote = book.prediction?.marketOf(outcome)?.quote(state.input.mint, state.held);
      // Without the venue's keys it cannot deliver: such orders are refunded at expiry.
      if (!venue || !quote || quote.outAmount < order.threshold) return undefined;
      fill = { inAmount: quote.spent ?? quote.inAmount, outAmount: quote.outAmount };
    }
    const wire = await predictionSettleTransaction({
      escrow: state.escrow,
      venue: venue as VenueSigningKeys,
      user: order.user as Address,
      input: state.input,
      output: state.output,
      escrowAmount: state.held,
      escrowLamports: state.lamports,
      ...(fill ? { fill } : {}),
      blockhash: book.clock.latest.blockhash,
    });
    const leftover = state.held - (fill?.inAmount ?? 0n);
    const plan: ClosePlan = {
      fill: fill
        ? {
            inputMint: state.input.mint,
            inAmount: fill.inAmount.toString(),
            outputMint: state.output.mint,
            outAmount: fill.outAmount.toString(),
          }
        : null,
      revert: leftover > 0n ? { mint: state.input.mint, amount: leftover.toString() } : null,
    };
    const close = {
      signature: bs58.encode(wire.subarray(1, 65)),
      wire: Buffer.from(wire).toString("base64"),
      validHeight: book.clock.latest.lastValidBlockHeight,
      plan,
    };
    const closing = await advanceOrder(db, order, {
      status: "pendingClose",
      close,
      ...(state.opening !== undefined ? { openSlot: state.opening } : {}),
    });
    if (!closing) return undefined;
    await chain.sendTransaction(wire).catch((error: unknown) => {
      this.options.logger?.info({ err: error, orderId: order.id }, "a settling transaction was refused");
    });
    return closing;
  }

  private async checkClose(order: OrderRecord): Promise<OrderRecord | undefined> {
    const { chain, db } = this.options;
    const close = order.close;
    if (!close) return advanceOrder(db, order, { status: "open", close: null });
    const [status] = await chain.getSignatureStatuses([close.signature as never]);
    if (status && !status.err) {
      const { fill, revert } = close.plan;
      return advanceOrder(db, order, {
        status: "closed",
        fills: fill ? [...order.fills, { signature: close.signature, ...fill }] : order.fills,
        reverts: revert ? [...order.reverts, { signature: close.signature, ...revert }] : order.reverts,
      });
    }
    // It failed (the escrow is untouched: transactions are atomic), or it can no longer land: try again.
    if (status?.err || this.options.book.clock.blockHeight > close.validHeight) {
      return advanceOrder(db, order, { status: "open", close: null });
    }
    await chain.sendTransaction(Buffer.from(close.wire, "base64")).catch(() => {});
    return undefined;
  }
}
