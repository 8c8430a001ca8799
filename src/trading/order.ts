/**
 * `GET /order`: finds the best route for a request, applies the platform fee, price-impact limit
 * and slippage, and, when the user is known, issues the firm quote's transaction and reserves the
 * output it promises until the transaction can no longer land.
 */
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../chain/chain.js";
import { ApiError } from "../http/errors.js";
import type { Tables } from "../storage/database.js";
import type { ChainClock, TradingBook } from "./book.js";
import { AUTO_SLIPPAGE_BPS, type OrderRequest } from "./order-params.js";
import { buildOrderTransaction, ORDER_COMPUTE_UNIT_LIMIT } from "./order-transaction.js";
import { issuePredictionOrder } from "./orders/prediction-orders.js";
import type { PoolAuthorities } from "./pools/authority.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route } from "./router.js";
import type { OrderResponse, RoutePlanLeg } from "./routes/schemas.js";
import { BPS } from "./venues/cpmm.js";
import type { CpmmPool } from "./venues/cpmm-pool.js";

export type { OrderResponse, RoutePlanLeg };

/** A request routed and priced, before any transaction. */
export interface PricedRoute {
  input: TokenRecord;
  output: TokenRecord;
  clock: ChainClock;
  route: Route;
  platformFee: bigint;
  /** What the user receives: the route's output less the platform fee. */
  outAmount: bigint;
  impact: number;
  slippageBps: number;
  threshold: bigint;
}

/** Quotes (and, with a user, issues) orders from the trading book. */
export class OrderDesk {
  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    /** Where async (prediction-market) orders are recorded; without it they are quotes only. */
    private readonly orders?: { db: Kysely<Tables>; authorities: PoolAuthorities },
  ) {}

  /** Routes and prices a request: the part `/order` and `/intent` share. */
  async price(request: OrderRequest): Promise<PricedRoute> {
    const { book } = this;
    if (!book.loaded)
      throw new ApiError("amm_map_not_initialized", "the pools are still loading; retry shortly");
    const input = this.listed(request.inputMint, "invalid_input_mint", "inputMint");
    const output = this.listed(request.outputMint, "invalid_output_mint", "outputMint");
    if (request.platformFeeBps > 0 && request.feeAccount)
      await this.checkFeeAccount(request.feeAccount, output);
    await book.prediction?.prepare([request.inputMint, request.outputMint]);
    const clock = book.clock;

    // Without a venue filter every venue is allowed: no set to build and check per market.
    let venues: Set<string> | undefined;
    if (request.dexes || request.excludeDexes) {
      venues = new Set(request.dexes ?? book.venues());
      for (const excluded of request.excludeDexes ?? []) venues.delete(excluded);
    }
    const route = book.graph.bestRoute({
      inputMint: request.inputMint,
      outputMint: request.outputMint,
      amount: request.amount,
      maxLegs: request.onlyDirectRoutes ? 1 : Math.min(2, request.maxRouteLength),
      venues,
    });
    if (!route) {
      throw new ApiError(
        "route_not_found",
        `no route from ${request.inputMint} to ${request.outputMint} for ${request.amount} with the allowed venues and route length`,
      );
    }
    const platformFee = (route.outAmount * BigInt(request.platformFeeBps)) / BPS;
    const outAmount = route.outAmount - platformFee;
    if (outAmount <= 0n)
      throw new ApiError("zero_out_amount", "the route pays nothing for this amount after fees");
    const impact = priceImpact(route);
    if (impact * 100 > request.priceImpactTolerancePct) {
      throw new ApiError(
        "price_impact_too_high",
        `the route's price impact is ${(impact * 100).toFixed(2)}%, above priceImpactTolerancePct ${request.priceImpactTolerancePct}%`,
      );
    }
    const slippageBps = request.slippageBps ?? AUTO_SLIPPAGE_BPS;
    const threshold = (outAmount * (BPS - BigInt(slippageBps))) / BPS;
    return { input, output, clock, route, platformFee, outAmount, impact, slippageBps, threshold };
  }

  async order(request: OrderRequest): Promise<OrderResponse> {
    const { input, output, clock, route, platformFee, outAmount, impact, slippageBps, threshold } =
      await this.price(request);
    const response: OrderResponse = {
      inputMint: request.inputMint,
      inAmount: route.inAmount.toString(),
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
          ? { amount: platformFee.toString(), feeBps: request.platformFeeBps, mode: "outputMint" }
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
    if (route.executionMode === "async") {
      // An outcome order that cannot fill (or the part of it that cannot) returns the input.
      response.revertMint = request.inputMint;
      response.predictionMarketSlippageBps = request.predictionMarketSlippageBps ?? slippageBps;
      if (request.userPublicKey) {
        if (!this.orders)
          throw new ApiError("route_not_found", "this venue takes no prediction-market orders");
        const opened = await issuePredictionOrder(
          this.orders,
          { ...request, userPublicKey: request.userPublicKey },
          { input, output, clock, route, platformFee, outAmount, impact, slippageBps, threshold },
        );
        return { ...response, ...opened, prioritizationFeeLamports: 0 };
      }
    }
    if (!request.userPublicKey) return response;

    // Reserved before any await, so a concurrent quote already prices without these tokens.
    const { lastValidBlockHeight } = clock.latest;
    const releases = route.legs.map((leg, index) =>
      (leg.market as CpmmPool).reserve(
        leg.outputMint,
        index === route.legs.length - 1 ? outAmount + platformFee : leg.outAmount,
        lastValidBlockHeight,
      ),
    );
    const microLamports =
      (BigInt(request.prioritizationFeeLamports) * 1_000_000n) / BigInt(ORDER_COMPUTE_UNIT_LIMIT);
    try {
      const wire = await buildOrderTransaction({
        user: request.userPublicKey,
        legs: route.legs,
        userOutAmount: outAmount,
        platformFee: request.feeAccount ? { amount: platformFee, account: request.feeAccount } : undefined,
        tokens: { input, output, token: (mint) => this.token(mint) },
        wrapAndUnwrapSol: request.wrapAndUnwrapSol,
        computeUnitLimit: ORDER_COMPUTE_UNIT_LIMIT,
        microLamportsPerComputeUnit: microLamports,
        lifetime: clock.latest,
      });
      // Solana charges ceil(limit × price / 10^6) lamports of priority fee.
      const priorityLamports = (BigInt(ORDER_COMPUTE_UNIT_LIMIT) * microLamports + 999_999n) / 1_000_000n;
      return {
        ...response,
        transaction: Buffer.from(wire).toString("base64"),
        lastValidBlockHeight: Number(lastValidBlockHeight),
        computeUnitLimit: ORDER_COMPUTE_UNIT_LIMIT,
        prioritizationFeeLamports: Number(priorityLamports),
        prioritizationType: {
          computeBudget: {
            microLamports: Number(microLamports),
            estimatedMicroLamports: Number(microLamports),
          },
        },
      };
    } catch (error) {
      for (const release of releases) release();
      throw error;
    }
  }

  private listed(
    mint: Address,
    code: "invalid_input_mint" | "invalid_output_mint",
    name: string,
  ): TokenRecord {
    const token = this.book.token(mint);
    if (!token) throw new ApiError(code, `${name} ${mint} is not a token this venue trades`);
    return token;
  }

  private token(mint: Address): TokenRecord {
    const token = this.book.token(mint);
    if (!token) throw new Error(`route uses unlisted mint ${mint}`);
    return token;
  }

  private async checkFeeAccount(feeAccount: Address, output: TokenRecord): Promise<void> {
    const account = await this.chain.getTokenAccount(feeAccount);
    if (!account || account.mint !== output.mint) {
      throw new ApiError(
        "invalid_fee_account",
        `feeAccount ${feeAccount} must be an existing token account of the output mint ${output.mint}`,
      );
    }
  }
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
