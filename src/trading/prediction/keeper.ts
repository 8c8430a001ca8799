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
import type { Kysely } from "kysely";
import { encodeSignature, parseAddress } from "../../chain/base58.js";
import type { Chain, LatestBlockhash, SignatureStatus } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import type { GenesisMarket } from "../../chain/market-ledger.js";
import { every, type Repeating } from "../../every.js";
import { marketAccounts } from "../../markets/accounts.js";
import { claimMarketInitialization, markMarketTokenized } from "../../markets/store.js";
import type { Tables } from "../../storage/database.js";
import type { PoolHold, VenueMarket } from "../spot/market.js";
import type { PoolAuthorities } from "../spot/pools/authority.js";
import type { TokenRecord } from "../spot/pools/store.js";
import type { SyncRoute } from "../spot/router.js";
import type { BookLogger, ChainClock, TradingBook } from "../spot/trading-book.js";
import { SLOT_MS } from "../spot/trading-book.js";
import { CPMM_VENUE } from "../spot/venues/cpmm-pool.js";
import { checkVenueSignatures } from "../tx/signing-guard.js";
import { associatedTokenAddress } from "../tx/token-accounts.js";
import { settleTransaction } from "./escrow.js";
import { initSettleTransaction } from "./market-init.js";
import {
  ACTIVE_ORDERS_PER_PASS,
  activeEscrows,
  activeOrders,
  advanceOrder,
  type ClosePlan,
  deleteExpiredInits,
  deleteUnpaidInit,
  type OrderRecord,
  type OrderTerms,
  orderById,
} from "./order-store.js";
import {
  type PredictionSettleInput,
  predictionFill,
  predictionSettleTransaction,
  type VenueSigningKeys,
} from "./orders.js";

/** The chain's answer for each pending intent's open transaction, as one pass read them. */
interface OpenStatuses {
  /** The block height known just before the statuses were read. */
  heightBefore: bigint;
  bySignature: Map<string, SignatureStatus | null>;
}

export interface OrderKeeperOptions {
  db: Kysely<Tables>;
  chain: Chain;
  book: TradingBook;
  authorities: PoolAuthorities;
  /** The venue's mint authority and treasury (sandbox only): without them prediction orders only refund. */
  venue?: VenueSigningKeys;
  /**
   * Creates a market's ledgers and outcome mints (every rail's) on the chain unless they exist (sandbox
   * only, with `venue`); without it markets are never initialized here and their initialization is refunded.
   */
  initMarket?: (market: GenesisMarket) => Promise<unknown>;
  logger?: BookLogger;
}

/** An open order's escrow as the chain holds it now: what planning its settlement starts from. */
interface Escrowed {
  order: OrderRecord;
  input: TokenRecord;
  output: TokenRecord;
  /** The chain's clock as the settlement began. */
  clock: ChainClock;
  /** Past its expiry: refunded, no longer filled. */
  expired: boolean;
  /** The escrow's authority: the settling transaction's fee payer. */
  escrow: Keypair;
  /** The escrow's token balance and its authority's lamports. */
  held: bigint;
  lamports: bigint;
}

/** A settling transaction, built and checked, not yet recorded. */
interface Settlement {
  wire: Uint8Array;
  /** The blockhash it was built on: it can land until the chain passes its last valid height. */
  lifetime: LatestBlockhash;
  /** The fill and the revert it makes, recorded as the order's once it lands. */
  plan: ClosePlan;
  /** Pool output held for its fill until it lands or can no longer land. */
  holds: readonly PoolHold[];
}

/** Moves escrowed orders on, one compare-and-set step at a time. */
export class OrderKeeper {
  private schedule: Repeating | undefined;
  /** The pass in progress, if any (`stop` waits for it). */
  private running: Promise<void> | undefined;
  private readonly busy = new Set<string>();
  /** Whether a pass has deleted the unpaid market initializations earlier versions left expired. */
  private expiredInitsDeleted = false;

  constructor(private readonly options: OrderKeeperOptions) {}

  /** Works through the active orders every slot (and at once, to resume what a restart left). */
  start(): void {
    this.schedule = every(SLOT_MS, () => (this.running = this.tick()), {
      onError: (error) => this.options.logger?.error({ err: error }, "order keeper tick failed"),
      immediately: true,
    });
  }

  /** Stops the passes; resolves once the one in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.schedule?.stop();
    this.schedule = undefined;
    // every() reports no failure after stop(): a last pass that failed is said here.
    await this.running?.catch((error: unknown) =>
      this.options.logger?.error({ err: error }, "the order keeper's last pass failed"),
    );
  }

  /** Resolves once the next pass over the active orders has finished (immediately when stopped). */
  async nextPass(): Promise<void> {
    await this.schedule?.nextRun();
  }

  /** An order (as just stored) whose open transaction just landed: settle it now rather than at the next tick. */
  opened(order: OrderRecord): void {
    void this.advance(order).catch((error: unknown) =>
      this.options.logger?.error({ err: error, orderId: order.id }, "settling an order failed"),
    );
  }

  /**
   * One pass over every active order; none while the chain's state is not current (`Chain.unhealthy`:
   * nothing is settled or signed from a copy another instance has moved on from).
   */
  async tick(): Promise<void> {
    const { db, book } = this.options;
    if (this.options.chain.unhealthy?.()) return;
    if (!this.expiredInitsDeleted) {
      // Unpaid initializations earlier versions marked expired and kept; none is marked so now.
      await deleteExpiredInits(db);
      this.expiredInitsDeleted = true;
    }
    const orders = await activeOrders(db);
    // The pass's own read names every escrow still in play unless it was cut at its limit.
    const complete = orders.length < ACTIVE_ORDERS_PER_PASS;
    book.followOrderEscrows(complete ? orders.map((order) => order.escrow) : await activeEscrows(db));
    const opens = await this.openStatuses(orders);
    for (const order of orders) await this.advance(order, opens);
  }

  /**
   * Where every pending intent's open transaction stands, read in one call for the pass: each would
   * otherwise cost a call of its own every slot (and anyone can leave refused intents pending).
   */
  private async openStatuses(orders: readonly OrderRecord[]): Promise<OpenStatuses | undefined> {
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

  /** Takes one order one or more steps on; never works on the same order twice at once. */
  private async advance(order: OrderRecord, opens?: OpenStatuses): Promise<void> {
    if (this.busy.has(order.id)) return;
    this.busy.add(order.id);
    try {
      // Each step returns the order as it stored it, so the next one needs no read.
      let current: OrderRecord | undefined = order;
      for (let steps = 0; current && steps < 4; steps++)
        current = await this.step(current, steps === 0 ? opens : undefined);
    } finally {
      this.busy.delete(order.id);
    }
  }

  /** Returns the order as changed, or undefined when it did not change. */
  private async step(order: OrderRecord, opens?: OpenStatuses): Promise<OrderRecord | undefined> {
    switch (order.status) {
      case "pending":
        if (order.kind === "init") return this.checkInitFunded(order);
        return order.kind === "async" ? this.checkFunded(order) : this.checkOpenLanded(order, opens);
      case "open":
        return this.settle(order);
      case "pendingClose":
        return this.checkClose(order);
      default:
        return undefined;
    }
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
    const escrowAccount = await associatedTokenAddress(order.escrow, input.mint, input.program);
    // Read before the balances: an open transaction not landed once the chain was past its height never
    // lands, but one landing during the reads must not be expired with the escrow funded.
    const heightBefore = book.clock.blockHeight;
    const [held, lamports] = await Promise.all([
      chain.getTokenAccount(escrowAccount),
      chain.getBalance(order.escrow),
    ]);
    const owed = order.feeBudget + BigInt(order.terms?.init?.cost ?? 0);
    if (held && held.amount >= order.inAmount && lamports >= owed)
      return this.openLanded(order, book.clock.slot);
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
    if (lamports >= order.inAmount + order.feeBudget) return this.openLanded(order, book.clock.slot);
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
      return status.err ? advanceOrder(db, order, { status: "failed" }) : this.openLanded(order, status.slot);
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
   * Fills the order now if its kind's plan finds a price meeting its threshold, refunds it once
   * expired. `opening` is the slot a pending order's open transaction landed in, recorded with the
   * settlement.
   */
  private async settle(order: OrderRecord, opening?: bigint): Promise<OrderRecord | undefined> {
    if (order.kind === "init") {
      const settlement = await this.planInit(order);
      return settlement ? this.recordAndSend(order, settlement, opening) : undefined;
    }
    const escrowed = await this.escrowed(order, opening ?? order.openSlot ?? 0n);
    if (!escrowed) return undefined;
    const settlement =
      order.kind === "async" ? await this.planPrediction(escrowed) : await this.planSpot(escrowed);
    if (!settlement) return undefined;
    return this.recordAndSend(order, settlement, opening);
  }

  /** The order's escrow as the chain holds it, or undefined when there is none to settle. */
  private async escrowed(order: OrderRecord, openSlot: bigint): Promise<Escrowed | undefined> {
    const { book, chain, db, authorities } = this.options;
    const input = book.token(order.inputMint);
    const output = book.token(order.outputMint);
    if (!input || !output) return undefined;
    const clock = book.clock;
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
    const expired = clock.slot > openSlot + BigInt(order.expirySlots);
    return { order, input, output, clock, expired, escrow, held: held.amount, lamports };
  }

  /** A spot order: through the best pool route, if it pays the threshold (else it waits), or refunded once expired. */
  private async planSpot(escrowed: Escrowed): Promise<Settlement | undefined> {
    const { book } = this.options;
    const { order, input, output, escrow } = escrowed;
    const lifetime = escrowed.clock.latest;
    let route: SyncRoute<VenueMarket> | undefined;
    if (!escrowed.expired) {
      const best = book.graph.bestRoute({
        inputMint: input.mint,
        outputMint: output.mint,
        amount: order.inAmount,
        maxLegs: 2,
        venues: new Set([CPMM_VENUE]),
      });
      if (best?.executionMode !== "sync" || best.outAmount < order.threshold) return undefined;
      route = best;
    }
    const wire = await settleTransaction({
      escrow,
      user: order.user,
      input,
      output,
      escrowAmount: escrowed.held,
      escrowLamports: escrowed.lamports,
      ...(route ? { fill: { legs: route.legs, userOut: route.outAmount } } : {}),
      blockhash: lifetime.blockhash,
    });
    const legs = route?.legs ?? [];
    // The escrow is the venue's own key here, so the settlement is checked like any transaction it signs.
    checkVenueSignatures(
      wire,
      {
        payer: escrow.address,
        payerSignedByVenue: true,
        legs: legs.map((leg) => ({
          pool: leg.market,
          inputMint: leg.inputMint,
          inAmount: leg.inAmount,
          outputMint: leg.outputMint,
          maxOut: leg.outAmount,
        })),
      },
      book,
    );
    const holds = legs.map((leg) =>
      leg.market.reserve(leg.outputMint, leg.outAmount, lifetime.lastValidBlockHeight, leg.inAmount),
    );
    return { wire, lifetime, plan: closePlan(escrowed, route), holds };
  }

  /**
   * A prediction-market order: against the venue at its book's price now (the builder fee taken), or
   * refunded once expired. A market the order pays to initialize is initialized first.
   */
  private async planPrediction(escrowed: Escrowed): Promise<Settlement | undefined> {
    const { book, venue, chain } = this.options;
    const { order, input, output } = escrowed;
    const terms = order.terms ?? {};
    const feeTerms = terms.builderFee;
    let fill: PredictionSettleInput["fill"];
    let recorded: { inAmount: bigint; outAmount: bigint } | undefined;
    if (!escrowed.expired) {
      // One side is an outcome mint, the other its rail's settlement mint (USDC or CASH).
      await book.prediction?.prepare([input.mint, output.mint]);
      const market = book.prediction?.marketOf(input.mint) ?? book.prediction?.marketOf(output.mint);
      const quoted = market ? predictionFill(market, input.mint, escrowed.held, feeTerms?.scale ?? 0) : null;
      // Without the venue's keys it cannot deliver: such orders are refunded at expiry.
      if (!venue || !market || !quoted || quoted.outAmount < order.threshold) return undefined;
      fill = {
        inAmount: quoted.inAmount,
        outAmount: quoted.outAmount,
        venue,
        settlementMint: market.settlementMint,
        ...(feeTerms && quoted.fee > 0n
          ? { fee: { amount: quoted.fee, account: parseAddress(feeTerms.account) } }
          : {}),
      };
      recorded = quoted;
    }
    const init = terms.init;
    const initPayment = init
      ? { amount: BigInt(init.cost), to: await this.initialize(order.id, init) }
      : undefined;
    // A buy of a market this order initializes creates the user's outcome account, unless it exists by now.
    const userOut = await associatedTokenAddress(order.user, output.mint, output.program);
    const createOutcomeAccount = Boolean(fill && init && !(await chain.getAccountInfo(userOut)));
    // The book may have been fetched meanwhile: the blockhash as of now.
    const lifetime = book.clock.latest;
    const wire = await predictionSettleTransaction({
      escrow: escrowed.escrow,
      user: order.user,
      input,
      output,
      escrowAmount: escrowed.held,
      escrowLamports: escrowed.lamports,
      ...(fill ? { fill } : {}),
      ...(terms.revertWallet ? { revertWallet: parseAddress(terms.revertWallet) } : {}),
      ...(initPayment ? { initPayment } : {}),
      ...(init && createOutcomeAccount ? { outcomeAccountRent: BigInt(init.outcomeAccountRent) } : {}),
      blockhash: lifetime.blockhash,
    });
    return { wire, lifetime, plan: closePlan(escrowed, recorded), holds: [] };
  }

  /**
   * Initializes the market an order or request paid for, when this venue can (idempotently: the
   * accounts, the claim and the catalogue mark each survive a repeat); returns where the payment goes:
   * the treasury when this payment initialized it, else back to its payer (someone else's did first,
   * the catalogue had it already, or this venue cannot initialize markets).
   */
  private async initialize(claimant: string, init: NonNullable<OrderTerms["init"]>): Promise<Address> {
    const { venue, initMarket, db } = this.options;
    const payer = parseAddress(init.payer);
    if (!venue || !initMarket) return payer;
    // The terms name the USDC rail; every rail is created at once.
    await initMarket(marketAccounts(init));
    // Claimed before it is marked: a market already marked tokenized is no one's to claim.
    const claimed = await claimMarketInitialization(db, init.ticker, claimant);
    await markMarketTokenized(db, init.ticker);
    return claimed ? venue.treasury.address : payer;
  }

  /** A market initialization whose payment arrived: the market is initialized and the payment settled. */
  private async planInit(order: OrderRecord): Promise<Settlement | undefined> {
    const { chain, authorities, book } = this.options;
    const init = order.terms?.init;
    const escrow = authorities.orderAuthority(order.id);
    const lamports = await chain.getBalance(escrow.address);
    // Settled already (a stale copy), or never complete: nothing to move.
    if (!init || lamports < order.inAmount + order.feeBudget) return undefined;
    const paidTo = await this.initialize(order.id, init);
    const lifetime = book.clock.latest;
    const wire = initSettleTransaction({
      escrow,
      payer: parseAddress(init.payer),
      cost: order.inAmount,
      lamports,
      paidTo,
      blockhash: lifetime.blockhash,
    });
    const refunded = paidTo !== this.options.venue?.treasury.address;
    return {
      wire,
      lifetime,
      plan: {
        fill: null,
        revert: refunded ? { mint: order.inputMint, amount: order.inAmount.toString() } : null,
      },
      holds: [],
    };
  }

  /**
   * Records the settlement as the order's (with the slot it opened in, when it opens now), then sends
   * it: recorded first, so that after a crash it is sent again rather than built anew. Its holds are
   * released if another step moved the order first, or the chain refuses it.
   */
  private async recordAndSend(
    order: OrderRecord,
    settlement: Settlement,
    opening: bigint | undefined,
  ): Promise<OrderRecord | undefined> {
    const { wire, holds } = settlement;
    const closing = await advanceOrder(this.options.db, order, {
      status: "pendingClose",
      close: {
        // A settlement has fewer than 128 signers: one length byte, then the fee payer's signature.
        signature: encodeSignature(wire.subarray(1, 65)),
        wire: Buffer.from(wire).toString("base64"),
        validHeight: settlement.lifetime.lastValidBlockHeight,
        plan: settlement.plan,
      },
      ...(opening !== undefined ? { openSlot: opening } : {}),
    });
    if (!closing) {
      for (const hold of holds) hold.release();
      return undefined;
    }
    await this.options.chain.sendTransaction(wire).catch((error: unknown) => {
      for (const hold of holds) hold.release();
      this.options.logger?.info({ err: error, orderId: order.id }, "a settling transaction was refused");
    });
    return closing;
  }

  /** A settling transaction sent: the order closes once it lands, and opens again if it never can. */
  private async checkClose(order: OrderRecord): Promise<OrderRecord | undefined> {
    const { chain, db } = this.options;
    const close = order.close;
    if (!close) return advanceOrder(db, order, { status: "open", close: null });
    const [status] = await chain.getSignatureStatuses([close.signature]);
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

/** What a settlement does: its fill, if any, and the revert of whatever the escrow holds beyond it. */
function closePlan(
  { input, output, held }: Escrowed,
  fill: { inAmount: bigint; outAmount: bigint } | undefined,
): ClosePlan {
  const leftover = held - (fill?.inAmount ?? 0n);
  return {
    fill: fill
      ? {
          inputMint: input.mint,
          inAmount: fill.inAmount.toString(),
          outputMint: output.mint,
          outAmount: fill.outAmount.toString(),
        }
      : null,
    revert: leftover > 0n ? { mint: input.mint, amount: leftover.toString() } : null,
  };
}
