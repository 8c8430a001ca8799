/**
 * `GET /order`: finds the best route for a request, applies the platform fee, price-impact limit
 * and slippage, and, when the user is known, issues the firm quote's transaction and reserves the
 * output it promises until the transaction can no longer land.
 */
import { randomUUID } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../../chain/chain.js";
import { LAMPORTS_PER_SIGNATURE, WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { parseWireTransaction } from "../../chain/wire.js";
import type { OrderResponse, QuoteResponse, RoutePlanLeg } from "../../contract/trade.js";
import { RESERVATION_LIMITS } from "../../limits.js";
import type { Tables } from "../../storage/database.js";
import { type OrderRefusal, OrderRefused, TradingNotReady } from "../errors.js";
import { orderPredictionMarket } from "../prediction/orders.js";
import { FirmQuotes, ReservationConflict, type ReservationStore } from "../quotes/firm-quotes.js";
import type { PriorityFeeLevels } from "../streams/priority-fees.js";
import {
  computeBudgetFields,
  computeUnitPriceFor,
  MAX_COMPUTE_UNIT_LIMIT,
  simulatedComputeUnitLimit,
} from "../tx/compute-budget.js";
import {
  buildOrderTransaction,
  ORDER_COMPUTE_UNIT_LIMIT,
  type OrderDestination,
  type OrderTransactionInput,
  orderInstructions,
} from "../tx/order-transaction.js";
import { checkMessageBeforeSigning, checkVenueSignatures } from "../tx/signing-guard.js";
import { associatedTokenAddress, checkNamedTokenAccount } from "../tx/token-accounts.js";
import type { VenueMarket } from "./market.js";
import { AUTO_SLIPPAGE_BPS, type OrderRequest, type PricedRoute } from "./order-terms.js";
import type { PoolAuthorities } from "./pools/authority.js";
import type { TokenRecord } from "./pools/store.js";
import { TRANSACTION_MAX_ACCOUNTS, type TransactionLimit } from "./request-limits.js";
import type { Route, SyncRoute } from "./router.js";
import { type SignedInstructionSet, signInstructionSet } from "./swap-instructions.js";
import type { TradingBook } from "./trading-book.js";
import { BPS } from "./venues/cpmm.js";

export type { OrderResponse, RoutePlanLeg };

/** Who asks for a firm quote: the key or the address its bound is counted against. */
export type ClientId = string;

/** Quotes (and, with a user, issues) orders from the trading book. */
export class OrderDesk {
  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    /** Where async (prediction-market) orders are recorded; without it they are quotes only. */
    private readonly orders?: { db: Kysely<Tables>; authorities: PoolAuthorities },
    /** The live firm quotes and their bounds (shared with the market-initialization desk). */
    private readonly firmQuotes: ReservationStore = new FirmQuotes({
      perWallet: RESERVATION_LIMITS.perWallet,
      perClient: RESERVATION_LIMITS.perClientAddress,
      poolShareBps: RESERVATION_LIMITS.poolShareBpsPerClient,
      poolHoldBps: RESERVATION_LIMITS.poolHoldBps,
    }),
    /** What recent transactions paid, for fees asked as a level; without it a level costs nothing. */
    private readonly priorityFees?: { levels(): PriorityFeeLevels },
  ) {}

  /** Routes and prices a request: the part `/order` and `/intent` share. */
  async price(request: OrderRequest): Promise<PricedRoute> {
    const { book } = this;
    if (!book.loaded) throw new TradingNotReady("pools", "the pools are still loading; retry shortly");
    const input = this.listed(request.inputMint, "invalid_input_mint", "inputMint");
    const output = this.listed(request.outputMint, "invalid_output_mint", "outputMint");
    for (const [name, refusal] of NAMED_ACCOUNTS) {
      const account = request[name];
      if (account && book.isVenueAccount(account))
        throw new OrderRefused(refusal, `${name} ${account} is one of the venue's own accounts`);
    }
    await book.prediction?.prepare([request.inputMint, request.outputMint]);
    const clock = book.clock;

    // Without a venue filter every venue is allowed: no set to build and check per market.
    let venues: Set<string> | undefined;
    if (request.dexes || request.excludeDexes || !request.allowSyncExec || !request.allowAsyncExec) {
      venues = new Set(request.dexes ?? book.venues());
      for (const excluded of request.excludeDexes ?? []) venues.delete(excluded);
      for (const venue of venues) {
        const mode = book.executionModeOf(venue);
        if ((mode === "sync" && !request.allowSyncExec) || (mode === "async" && !request.allowAsyncExec))
          venues.delete(venue);
      }
    }
    const find = (amount: bigint) =>
      book.graph.bestRoute({
        inputMint: request.inputMint,
        outputMint: request.outputMint,
        amount,
        maxLegs: request.onlyDirectRoutes ? 1 : Math.min(2, request.maxRouteLength),
        venues,
      });
    let route = find(request.amount);
    // An input-mint fee comes off the amount before it is routed; prediction markets take fees in USDC.
    const feeMode = route?.executionMode === "sync" ? request.platformFeeMode : "outputMint";
    const inputFee = feeMode === "inputMint" ? (request.amount * BigInt(request.platformFeeBps)) / BPS : 0n;
    if (inputFee > 0n) route = find(request.amount - inputFee);
    if (!route) {
      throw new OrderRefused(
        "route_not_found",
        // A settled market's outcome mint: say so, and how to redeem, rather than "no route".
        book.prediction?.notTradingReason(request.inputMint, request.outputMint) ??
          `no route from ${request.inputMint} to ${request.outputMint} for ${request.amount} with the allowed venues and route length`,
      );
    }
    if (route.executionMode === "sync") {
      if (request.platformFeeScale > 0)
        throw new OrderRefused(
          "invalid_platform_fee_scale",
          "platformFeeScale is the prediction-market builder fee; a spot route takes platformFeeBps",
        );
      // Prediction-market orders check their own fee account: their fees are paid in USDC.
      if (request.feeAccount)
        await checkNamedTokenAccount(this.chain, book, {
          name: "feeAccount",
          account: request.feeAccount,
          mint: feeMode === "inputMint" ? input.mint : output.mint,
          refusal: "invalid_fee_account",
        });
    }
    const platformFee =
      feeMode === "inputMint" ? inputFee : (route.outAmount * BigInt(request.platformFeeBps)) / BPS;
    const outAmount = feeMode === "inputMint" ? route.outAmount : route.outAmount - platformFee;
    if (outAmount <= 0n)
      throw new OrderRefused("zero_out_amount", "the route pays nothing for this amount after fees");
    const impact = priceImpact(route);
    if (impact * 100 > request.priceImpactTolerancePct) {
      throw new OrderRefused(
        "price_impact_too_high",
        `the route's price impact is ${(impact * 100).toFixed(2)}%, above priceImpactTolerancePct ${request.priceImpactTolerancePct}%`,
      );
    }
    if (request.minOutAmount !== undefined && outAmount < request.minOutAmount)
      throw new OrderRefused(
        "invalid_out_amount",
        `the route now pays ${outAmount}, less than the quote's otherAmountThreshold ${request.minOutAmount}; get a new quote`,
      );
    const slippageBps = request.slippageBps ?? AUTO_SLIPPAGE_BPS;
    const threshold = (outAmount * (BPS - BigInt(slippageBps))) / BPS;
    return { input, output, clock, route, platformFee, feeMode, outAmount, impact, slippageBps, threshold };
  }

  /** `GET /quote`: prices a spot swap; prediction markets trade through `/order` only. */
  async quote(request: OrderRequest): Promise<QuoteResponse> {
    const priced = await this.price(request);
    refuseAsync(priced.route);
    const { executionMode: _, ...quote } = this.describe(request, priced);
    return { ...quote, requestId: randomUUID(), routingSlot: quote.contextSlot };
  }

  /** `POST /swap` and `/swap-instructions`: issues a spot swap for its user, in the shape asked. */
  async swap(
    request: OrderRequest & { userPublicKey: Address },
    client: ClientId,
    shape: IssueOptions["shape"],
  ): Promise<IssuedSwap> {
    // The request allows no async (prediction-market) route: swaps are spot only.
    const order = await this.order({ ...request, allowAsyncExec: false }, client, { shape });
    const { transaction, lastValidBlockHeight, computeUnitLimit, prioritizationFeeLamports } = order;
    if (
      transaction === undefined ||
      lastValidBlockHeight === undefined ||
      computeUnitLimit === undefined ||
      prioritizationFeeLamports === undefined
    )
      throw new Error("a spot order for a user is issued with its transaction");
    return { ...order, transaction, lastValidBlockHeight, computeUnitLimit, prioritizationFeeLamports };
  }

  /** Quotes `request` and, with a user, issues its transaction; `client` is who asks, for the bounds of firm quotes. */
  async order(
    asked: OrderRequest,
    client: ClientId = "local",
    options: IssueOptions = ORDER,
  ): Promise<IssuedOrder> {
    const request = this.withPriorityPrice(asked);
    // Before pricing: a hold another instance makes from here on is noticed when this one reserves.
    const view = this.firmQuotes.view();
    const priced = await this.price(request);
    const { input, clock, route } = priced;
    const response = this.describe(request, priced);
    const user = request.userPublicKey;
    if (route.executionMode === "async") {
      return orderPredictionMarket(this.orders, request, priced, response, async (wallet) => {
        const balance = await this.balanceOf(wallet, input, false);
        const terms = { wallet, client, inputMint: input.mint, inAmount: request.amount, balance };
        await this.firmQuotes.check(terms, clock.blockHeight);
        // Each order is a stored row the keeper watches, so it counts against the bounds until its
        // blockhash expires; its input is not held for it, as it holds no pool output (and once it
        // opens, the input has left the wallet anyway).
        return this.firmQuotes.reserve(
          { ...terms, inAmount: 0n },
          clock.blockHeight,
          clock.latest.lastValidBlockHeight,
        );
      });
    }
    if (!user) return response;
    try {
      return await this.issue({ ...request, userPublicKey: user }, client, priced, route, response, {
        ...options,
        view,
      });
    } catch (error) {
      if (error instanceof ReservationConflict) return this.orderAgain(asked, client, options, error);
      if (!(error instanceof TransactionTooLarge)) throw error;
      const tooLarge = new OrderRefused(error.refusal, error.message);
      if (route.legs.length === 1 || request.onlyDirectRoutes) throw tooLarge;
      // A two-leg route too large for the caller's limits may still fit as a direct one; with no
      // direct route at all, what stands in the way is still the limit.
      try {
        return await this.order({ ...request, onlyDirectRoutes: true }, client, options);
      } catch (direct) {
        throw direct instanceof OrderRefused && direct.reason === "route_not_found" ? tooLarge : direct;
      }
    }
  }

  /**
   * Prices and issues an order again after another instance held output of its pools while it was
   * priced (the holds are now in the pools here), a few times at most.
   */
  private orderAgain(
    asked: OrderRequest,
    client: ClientId,
    options: IssueOptions,
    conflict: ReservationConflict,
  ): Promise<IssuedOrder> {
    const attempt = (options.attempt ?? 0) + 1;
    if (attempt >= MAX_RESERVATION_ATTEMPTS)
      throw new TradingNotReady("pools", `${conflict.message}, ${attempt} times; retry shortly`);
    return this.order(asked, client, { ...options, attempt });
  }

  /** The response fields of a priced order, before any transaction. */
  private describe(request: OrderRequest, priced: PricedRoute): OrderResponse {
    const { clock, route, platformFee, feeMode, outAmount, impact, slippageBps, threshold } = priced;
    return {
      inputMint: request.inputMint,
      inAmount: (route.inAmount + (feeMode === "inputMint" ? platformFee : 0n)).toString(),
      outputMint: request.outputMint,
      outAmount: outAmount.toString(),
      otherAmountThreshold: threshold.toString(),
      minOutAmount: threshold.toString(),
      slippageBps,
      priceImpactPct: formatFraction(impact),
      contextSlot: Number(clock.slot),
      executionMode: route.executionMode,
      platformFee:
        request.platformFeeBps > 0
          ? { amount: platformFee.toString(), feeBps: request.platformFeeBps, mode: feeMode }
          : null,
      routePlan: route.legs.map((leg) => ({
        venue: leg.market.venue,
        marketKey: leg.market.key,
        inputMint: leg.inputMint,
        outputMint: leg.outputMint,
        inAmount: leg.inAmount.toString(),
        outAmount: leg.outAmount.toString(),
        inputMintDecimals: this.token(leg.inputMint).decimals,
        outputMintDecimals: this.token(leg.outputMint).decimals,
      })),
    };
  }

  /** The request with its priority level's price as recent transactions paid it now. */
  private withPriorityPrice(request: OrderRequest): OrderRequest {
    const asked = request.priorityLevel;
    if (!asked || !this.priorityFees) return request;
    const levels = this.priorityFees.levels();
    const perUnit = {
      medium: levels.mediumMicroLamports,
      high: levels.highMicroLamports,
      veryHigh: levels.veryHighMicroLamports,
    }[asked.level];
    return {
      ...request,
      priorityLevel: { ...asked, microLamports: BigInt(perUnit) * BigInt(asked.multiplier) },
    };
  }

  /** Issues a firm spot quote's transaction, signed by its pools, holding their output for the user. */
  private async issue(
    request: OrderRequest & { userPublicKey: Address },
    client: ClientId,
    priced: PricedRoute,
    route: SyncRoute<VenueMarket>,
    response: OrderResponse,
    options: IssueOptions,
  ): Promise<IssuedOrder> {
    const { input, output, clock, platformFee, feeMode, outAmount } = priced;
    const user = request.userPublicKey;
    const destination = await this.destinationOf(request, output);
    const feePayer = request.sponsor ?? user;
    if (request.sponsor) await this.checkSponsor(request.sponsor, route);
    const legs = route.legs.map((leg, index) => ({
      pool: leg.market,
      inputMint: leg.inputMint,
      inAmount: leg.inAmount,
      outputMint: leg.outputMint,
      maxOut:
        index === route.legs.length - 1
          ? outAmount + (feeMode === "outputMint" ? platformFee : 0n)
          : leg.outAmount,
    }));
    const firm = {
      wallet: user,
      client,
      inputMint: request.inputMint,
      inAmount: route.inAmount + (feeMode === "inputMint" ? platformFee : 0n),
      holds: legs.map((leg) => {
        const side = leg.pool.sideOf(leg.outputMint);
        return { side: `${leg.pool.key}:${side}`, amount: leg.maxOut, reserve: leg.pool.balance(side) };
      }),
      balance: await this.balanceOf(user, input, request.wrapAndUnwrapSol),
    };
    // Counted and held at once: a concurrent quote (on any instance, with a shared store) sees both,
    // whatever awaits issuing this one takes.
    const { lastValidBlockHeight } = clock.latest;
    const admitted = await this.firmQuotes.reserve(
      firm,
      clock.blockHeight,
      lastValidBlockHeight,
      legs,
      options.view,
    );
    const swap = { payer: user, feePayer, payerSignedByVenue: false, legs };
    const { holds } = admitted;
    const transactionInput = (limit: number, microLamports: bigint): OrderTransactionInput => ({
      user,
      feePayer,
      destination,
      outputCloseAuthority: request.outputCloseAuthority,
      legs: route.legs,
      userOutAmount: outAmount,
      platformFee: request.feeAccount
        ? { amount: platformFee, account: request.feeAccount, mode: feeMode }
        : undefined,
      tokens: { input, output, token: (mint) => this.token(mint) },
      wrapAndUnwrapSol: request.wrapAndUnwrapSol,
      computeUnitLimit: limit,
      microLamportsPerComputeUnit: microLamports,
      lifetime: clock.latest,
      beforeSigning: (message, instructions, signers) =>
        checkMessageBeforeSigning(message, instructions, signers, swap, this.book),
    });
    const build = (limit: number, microLamports: bigint) =>
      buildOrderTransaction(transactionInput(limit, microLamports));
    try {
      // Priced from the chain's state as it was: signed only if that is still the writer's (the
      // awaits since may have seen this instance's lease taken by another).
      this.book.checkChain();
      const limit = request.dynamicComputeUnitLimit
        ? await simulatedComputeUnitLimit(
            this.chain,
            await build(MAX_COMPUTE_UNIT_LIMIT, 0n),
            ORDER_COMPUTE_UNIT_LIMIT,
          )
        : ORDER_COMPUTE_UNIT_LIMIT;
      const microLamports = computeUnitPriceFor(request, limit);
      const wire = await build(limit, microLamports);
      checkTransactionLimits(wire, request);
      let instructionSet: SignedInstructionSet | undefined;
      if (options.shape === "instructions") {
        instructionSet = signInstructionSet(
          await orderInstructions(transactionInput(limit, microLamports)),
          clock.latest,
        );
        // Signed in another account order than the transaction above: read again as the chain will.
        checkVenueSignatures(instructionSet.wire, swap, this.book);
      }
      admitted.attach(holds);
      return {
        ...(instructionSet ? { instructionSet } : {}),
        ...response,
        transaction: Buffer.from(wire).toString("base64"),
        lastValidBlockHeight: Number(lastValidBlockHeight),
        ...computeBudgetFields(limit, microLamports),
        // The venue's transactions load no lookup tables: asked for them, the list is empty.
        ...(request.includeAddressLookupTables ? { addressLookupTables: [] } : {}),
      };
    } catch (error) {
      // Not issued (the signing guard refused it, or building failed): the output is free again.
      for (const hold of holds) hold.release();
      admitted.cancel();
      throw error;
    }
  }

  /**
   * Where the output goes: `destinationTokenAccount` (an existing account of the output mint that no
   * venue key owns; for native SOL output the wallet the SOL is sent to), `destinationWallet`, or the user.
   */
  private async destinationOf(
    request: OrderRequest,
    output: TokenRecord,
  ): Promise<OrderDestination | undefined> {
    if (request.destinationWallet) return { wallet: request.destinationWallet };
    const account = request.destinationTokenAccount;
    if (!account) return undefined;
    if (request.wrapAndUnwrapSol && output.mint === WRAPPED_SOL_MINT) return { wallet: account };
    await checkNamedTokenAccount(this.chain, this.book, {
      name: "destinationTokenAccount",
      account,
      mint: output.mint,
      refusal: "invalid_destination_token_account",
    });
    return { tokenAccount: account };
  }

  /** Refuses a sponsor that cannot pay the transaction's signatures: its transaction could never land. */
  private async checkSponsor(sponsor: Address, route: SyncRoute<VenueMarket>): Promise<void> {
    const signatures = 2n + BigInt(new Set(route.legs.map((leg) => leg.market)).size);
    const lamports = await this.chain.getBalance(sponsor);
    if (lamports < signatures * LAMPORTS_PER_SIGNATURE)
      throw new OrderRefused(
        "invalid_sponsor",
        `sponsor ${sponsor} holds ${lamports} lamports, less than the ${signatures * LAMPORTS_PER_SIGNATURE} its transaction's fee needs`,
      );
  }

  /** What `user` can pay of `token` now: its token account, or its lamports when native SOL is wrapped for it. */
  private async balanceOf(user: Address, token: TokenRecord, wrapSol: boolean): Promise<bigint> {
    if (wrapSol && token.mint === WRAPPED_SOL_MINT) return this.chain.getBalance(user);
    const amount = await this.chain.getTokenAccountBalance(
      await associatedTokenAddress(user, token.mint, token.program),
    );
    return amount ?? 0n;
  }

  /** The listed token `mint` names, refused with `reason` when the venue does not trade it. */
  private listed(
    mint: Address,
    reason: Extract<OrderRefusal, "invalid_input_mint" | "invalid_output_mint">,
    name: string,
  ): TokenRecord {
    const token = this.book.token(mint);
    if (!token) throw new OrderRefused(reason, `${name} ${mint} is not a token this venue trades`);
    return token;
  }

  /** A token a route uses: always listed, since routes run over listed markets only. */
  private token(mint: Address): TokenRecord {
    const token = this.book.token(mint);
    if (!token) throw new Error(`route uses unlisted mint ${mint}`);
    return token;
  }
}

/** How an order is issued: as one transaction (`/order`, `/swap`) or as instructions (`/swap-instructions`). */
export interface IssueOptions {
  shape: "transaction" | "instructions";
  /** Where pricing started (`ReservationStore.view`). */
  view?: number;
  /** Times the order was priced again after a conflict with another instance's holds. */
  attempt?: number;
}

/** Prices of one order after other instances' holds conflicted, at most, before it is refused as not ready. */
const MAX_RESERVATION_ATTEMPTS = 4;

const ORDER: IssueOptions = { shape: "transaction" };

/** An order's response, and with the instructions shape the instructions the pools signed. */
export type IssuedOrder = OrderResponse & { instructionSet?: SignedInstructionSet };

/** A spot swap issued for its user: the transaction and its compute budget are always there. */
export type IssuedSwap = IssuedOrder &
  Required<
    Pick<
      OrderResponse,
      "transaction" | "lastValidBlockHeight" | "computeUnitLimit" | "prioritizationFeeLamports"
    >
  >;

function refuseAsync(route: Route): void {
  if (route.executionMode === "async")
    throw new OrderRefused(
      "use_order_endpoint_for_prediction_markets",
      "prediction-market outcome tokens trade through GET /order",
    );
}

/** The accounts a request may name, and the refusal when one of them is the venue's own. */
const NAMED_ACCOUNTS = [
  ["userPublicKey", "invalid_user_public_key"],
  ["destinationWallet", "invalid_destination_wallet"],
  ["destinationTokenAccount", "invalid_destination_token_account"],
  ["sponsor", "invalid_sponsor"],
  ["positiveSlippageFeeAccount", "invalid_positive_slippage_fee_account"],
  ["outputCloseAuthority", "invalid_output_close_authority"],
  ["revertWallet", "invalid_revert_wallet"],
  ["predictionMarketInitPayer", "invalid_prediction_market_init_payer"],
  ["outcomeAccountRentRecipient", "invalid_outcome_account_rent_recipient"],
] as const satisfies readonly (readonly [keyof OrderRequest, OrderRefusal])[];

/** A transaction over the caller's size limits: the refusal names the limit. */
class TransactionTooLarge extends Error {
  constructor(
    readonly refusal: TransactionLimit["refusal"],
    message: string,
  ) {
    super(message);
  }
}

/** Throws `TransactionTooLarge` when the wire transaction exceeds `maxAccounts` or `maxTransactionSize`. */
function checkTransactionLimits(
  wire: Uint8Array,
  limits: Pick<OrderRequest, "maxAccounts" | "maxTransactionSize">,
): void {
  const { maxAccounts, maxTransactionSize } = limits;
  if (wire.length > maxTransactionSize.limit)
    throw new TransactionTooLarge(
      maxTransactionSize.refusal,
      `the order's transaction takes ${wire.length} bytes, more than the ${maxTransactionSize.limit} allowed`,
    );
  // Within the chain's own limit every transaction the venue builds fits: parse only when asked for less.
  if (maxAccounts.limit >= TRANSACTION_MAX_ACCOUNTS) return;
  const accounts = parseWireTransaction(wire).accountKeys.length;
  if (accounts > maxAccounts.limit)
    throw new TransactionTooLarge(
      maxAccounts.refusal,
      `the order's transaction names ${accounts} accounts, more than the ${maxAccounts.limit} allowed`,
    );
}

/** 1 − output / output at the marginal prices, never negative. */
function priceImpact(route: Route): number {
  if (route.spotOutAmount <= 0) return 0;
  return Math.max(0, 1 - Number(route.outAmount) / route.spotOutAmount);
}

/** A fraction as a plain decimal string with at most 6 fraction digits, e.g. "0.0123" or "0". */
export function formatFraction(value: number): string {
  return value.toFixed(6).replace(/\.?0+$/, "") || "0";
}
