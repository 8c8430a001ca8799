/**
 * The pricing step of an order: the best route for a request over the venues it allows, the platform
 * fee, the price-impact limit and slippage, and the response fields they come to. It reads the
 * trading book only (and the chain for a fee account a spot route pays into); nothing is held here.
 */
import type { Address } from "@solana/kit";
import type { Chain } from "../../chain/chain.js";
import type { OrderResponse } from "../../contract/trade.js";
import { type OrderRefusal, OrderRefused, TradingNotReady } from "../errors.js";
import type { PriorityFeeLevels } from "../streams/priority-fees.js";
import { checkNamedTokenAccount } from "../tx/token-accounts.js";
import { AUTO_SLIPPAGE_BPS, type OrderRequest, type PricedRoute } from "./order-terms.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route } from "./router.js";
import type { TradingBook } from "./trading-book.js";
import { BPS } from "./venues/cpmm.js";

/** A request priced: the request with its priority level's price, its route and its response fields. */
export interface PricedOrder {
  request: OrderRequest;
  priced: PricedRoute;
  response: OrderResponse;
}

/** Runs a routing with some holds taken off the pools (`ReservationStore.lend`). */
export type Lend = <T>(price: () => T) => T;

export class OrderPricing {
  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    /** What recent transactions paid, for fees asked as a level; without it a level costs nothing. */
    private readonly priorityFees?: { levels(): PriorityFeeLevels },
  ) {}

  /**
   * Prices `asked` as `/order` answers it: its route, its priority fee as paid now, its response
   * fields. `lend` runs the routing with the asker's own earlier quotes of the pair taken off the pools.
   */
  async priceOrder(asked: OrderRequest, lend?: Lend): Promise<PricedOrder> {
    const request = this.withPriorityPrice(asked);
    const priced = await this.priceRoute(request, lend);
    return { request, priced, response: this.describe(request, priced) };
  }

  /** Routes and prices a request: the part `/order` and `/intent` share. */
  async priceRoute(request: OrderRequest, lend?: Lend): Promise<PricedRoute> {
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
    const venues = this.allowedVenues(request);
    const search = (amount: bigint) =>
      book.graph.bestRoute({
        inputMint: request.inputMint,
        outputMint: request.outputMint,
        amount,
        maxLegs: request.onlyDirectRoutes ? 1 : Math.min(2, request.maxRouteLength),
        venues,
      });
    const find = lend ? (amount: bigint) => lend(() => search(amount)) : search;
    let route = find(request.amount);
    // An input-mint fee comes off the amount before it is routed; prediction markets take fees in USDC.
    const feeMode = route?.executionMode === "sync" ? request.platformFeeMode : "outputMint";
    const inputFee = feeMode === "inputMint" ? (request.amount * BigInt(request.platformFeeBps)) / BPS : 0n;
    if (inputFee > 0n) route = find(request.amount - inputFee);
    if (!route) {
      const unreadable = book.prediction?.unreadableBook(request.inputMint, request.outputMint);
      if (unreadable) throw new TradingNotReady("upstream", unreadable);
      throw new OrderRefused(
        "route_not_found",
        // A settled market's outcome mint: say so, and how to redeem, rather than "no route".
        book.prediction?.notTradingReason(request.inputMint, request.outputMint) ??
          `no route from ${request.inputMint} to ${request.outputMint} for ${request.amount} with the allowed venues and route length`,
      );
    }
    if (route.executionMode === "sync")
      await this.checkSpotFee(request, feeMode === "inputMint" ? input : output);
    const platformFee =
      feeMode === "inputMint" ? inputFee : (route.outAmount * BigInt(request.platformFeeBps)) / BPS;
    const outAmount = feeMode === "inputMint" ? route.outAmount : route.outAmount - platformFee;
    if (outAmount <= 0n)
      throw new OrderRefused("zero_out_amount", "the route pays nothing for this amount after fees");
    const impact = priceImpact(route);
    checkPriceImpact(route, impact, request.priceImpactTolerancePct);
    if (request.minOutAmount !== undefined && outAmount < request.minOutAmount)
      throw new OrderRefused(
        "invalid_out_amount",
        `the route now pays ${outAmount}, less than the quote's otherAmountThreshold ${request.minOutAmount}; get a new quote`,
      );
    const slippageBps = request.slippageBps ?? AUTO_SLIPPAGE_BPS;
    const threshold = (outAmount * (BPS - BigInt(slippageBps))) / BPS;
    return { input, output, clock, route, platformFee, feeMode, outAmount, impact, slippageBps, threshold };
  }

  /** The venues a route may use; undefined (every venue, no set to build and check per market) without a filter. */
  private allowedVenues(request: OrderRequest): Set<string> | undefined {
    if (!request.dexes && !request.excludeDexes && request.allowSyncExec && request.allowAsyncExec)
      return undefined;
    const venues = new Set(request.dexes ?? this.book.venues());
    for (const excluded of request.excludeDexes ?? []) venues.delete(excluded);
    for (const venue of venues) {
      const mode = this.book.executionModeOf(venue);
      if ((mode === "sync" && !request.allowSyncExec) || (mode === "async" && !request.allowAsyncExec))
        venues.delete(venue);
    }
    return venues;
  }

  /**
   * A spot route's fee: `platformFeeScale` is the prediction markets' builder fee, and the fee account
   * must hold the fee's mint (prediction-market orders check their own: their fees are paid in USDC).
   */
  private async checkSpotFee(request: OrderRequest, feeToken: TokenRecord): Promise<void> {
    if (request.platformFeeScale > 0)
      throw new OrderRefused(
        "invalid_platform_fee_scale",
        "platformFeeScale is the prediction-market builder fee; a spot route takes platformFeeBps",
      );
    if (request.feeAccount)
      await checkNamedTokenAccount(this.chain, this.book, {
        name: "feeAccount",
        account: request.feeAccount,
        mint: feeToken.mint,
        refusal: "invalid_fee_account",
      });
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
        inputMintDecimals: routeToken(this.book, leg.inputMint).decimals,
        outputMintDecimals: routeToken(this.book, leg.outputMint).decimals,
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
      priorityLevel: {
        level: asked.level,
        multiplier: asked.multiplier,
        microLamports: BigInt(perUnit) * BigInt(asked.multiplier),
      },
    };
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

/** A token a route uses: always listed, since routes run over listed markets only. */
export function routeToken(book: TradingBook, mint: Address): TokenRecord {
  const token = book.token(mint);
  if (!token) throw new Error(`route uses unlisted mint ${mint}`);
  return token;
}

/** The price impact a spot route may have when the caller sets no `priceImpactTolerancePct`, in percent. */
const DEFAULT_PRICE_IMPACT_TOLERANCE_PCT = 25;
/**
 * How far a prediction-market fill's average price may be from the best price when the caller sets
 * no tolerance, as a share of the 1 USDC a contract pays. A relative bound refuses ordinary buys of
 * cheap contracts (one cent up from a 2¢ ask is 50%) and lets an expensive contract's fill run many
 * cents; what a buyer pays for is probability, in absolute points. Three cents lets an ordinary buy
 * take the next few levels (5 USDC of a 2¢ contract averages about 4¢) and stops a fill that walks
 * up the book.
 */
const DEFAULT_OUTCOME_PRICE_GAP = 0.03;

/**
 * Refuses a route whose price impact is above `tolerancePct`, or when it is unset, above the default
 * for its kind of route.
 */
function checkPriceImpact(route: Route, impact: number, tolerancePct: number | undefined): void {
  if (tolerancePct !== undefined || route.executionMode === "sync") {
    const limit = tolerancePct ?? DEFAULT_PRICE_IMPACT_TOLERANCE_PCT;
    if (impact * 100 > limit)
      throw new OrderRefused(
        "price_impact_too_high",
        `the route's price impact is ${(impact * 100).toFixed(2)}%, above priceImpactTolerancePct ${limit}%${tolerancePct === undefined ? " (the default for a spot route)" : ""}`,
      );
    return;
  }
  const gap = outcomePriceGap(route);
  if (gap > DEFAULT_OUTCOME_PRICE_GAP)
    throw new OrderRefused(
      "price_impact_too_high",
      `the fill's average price is ${(gap * 100).toFixed(2)} cents per contract from the best price, more than the ${DEFAULT_OUTCOME_PRICE_GAP * 100} the venue takes without priceImpactTolerancePct; set it to accept more`,
    );
}

/**
 * How far a prediction-market fill's average price per contract is from the best one, in USDC (one
 * contract is 10^6 units and pays 10^6 micro-USDC): a buy spends `spent` for `outAmount` where the
 * best ask would have bought `spotOutAmount`; a sale of `inAmount` fetches `outAmount` where the best
 * bid would have paid `spotOutAmount`. Redemptions pay their fixed price: no gap.
 */
function outcomePriceGap(route: Route): number {
  const { inAmount, outAmount, spotOutAmount, spent } = route;
  if (spent !== undefined) return Number(spent) * (1 / Number(outAmount) - 1 / spotOutAmount);
  return Math.max(0, spotOutAmount - Number(outAmount)) / Number(inAmount);
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
