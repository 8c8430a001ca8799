/**
 * `GET /order`: finds the best route for a request, applies the platform fee, price-impact limit
 * and slippage, and, when the user is known, issues the firm quote's transaction and reserves the
 * output it promises until the transaction can no longer land.
 */
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../chain/chain.js";
import { WRAPPED_SOL_MINT } from "../chain/programs.js";
import type { OrderResponse, RoutePlanLeg } from "../contract/trade.js";
import { RESERVATION_LIMITS } from "../limits.js";
import type { Tables } from "../storage/database.js";
import type { TradingBook } from "./book.js";
import { type OrderRefusal, OrderRefused, TradingNotReady } from "./errors.js";
import { type FirmQuoteLimits, FirmQuotes } from "./firm-quotes.js";
import type { VenueMarket } from "./market.js";
import { AUTO_SLIPPAGE_BPS, type OrderRequest, type PricedRoute } from "./order-terms.js";
import { buildOrderTransaction, ORDER_COMPUTE_UNIT_LIMIT } from "./order-transaction.js";
import { issuePredictionOrder } from "./orders/prediction-orders.js";
import type { PoolAuthorities } from "./pools/authority.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route, SyncRoute } from "./router.js";
import { checkMessageBeforeSigning } from "./signing-guard.js";
import { associatedTokenAddress } from "./token-accounts.js";
import { BPS } from "./venues/cpmm.js";

export type { OrderResponse, RoutePlanLeg };

/** Who asks for a firm quote: the key or the address its bound is counted against. */
export type ClientId = string;

/** Quotes (and, with a user, issues) orders from the trading book. */
export class OrderDesk {
  private readonly firmQuotes: FirmQuotes;

  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    /** Where async (prediction-market) orders are recorded; without it they are quotes only. */
    private readonly orders?: { db: Kysely<Tables>; authorities: PoolAuthorities },
    limits: FirmQuoteLimits = {
      perWallet: RESERVATION_LIMITS.perWallet,
      perClient: RESERVATION_LIMITS.perClientAddress,
    },
  ) {
    this.firmQuotes = new FirmQuotes(limits);
  }

  /** Routes and prices a request: the part `/order` and `/intent` share. */
  async price(request: OrderRequest): Promise<PricedRoute> {
    const { book } = this;
    if (!book.loaded) throw new TradingNotReady("pools", "the pools are still loading; retry shortly");
    const input = this.listed(request.inputMint, "invalid_input_mint", "inputMint");
    const output = this.listed(request.outputMint, "invalid_output_mint", "outputMint");
    if (request.userPublicKey && book.isVenueAccount(request.userPublicKey)) {
      throw new OrderRefused(
        "invalid_user_public_key",
        `userPublicKey ${request.userPublicKey} is one of the venue's own accounts`,
      );
    }
    if (request.destinationWallet && book.isVenueAccount(request.destinationWallet)) {
      throw new OrderRefused(
        "invalid_destination_wallet",
        `destinationWallet ${request.destinationWallet} is one of the venue's own accounts`,
      );
    }
    if (request.feeAccount) await this.checkFeeAccount(request.feeAccount, output);
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
    const route = book.graph.bestRoute({
      inputMint: request.inputMint,
      outputMint: request.outputMint,
      amount: request.amount,
      maxLegs: request.onlyDirectRoutes ? 1 : Math.min(2, request.maxRouteLength),
      venues,
    });
    if (!route) {
      throw new OrderRefused(
        "route_not_found",
        `no route from ${request.inputMint} to ${request.outputMint} for ${request.amount} with the allowed venues and route length`,
      );
    }
    const platformFee = (route.outAmount * BigInt(request.platformFeeBps)) / BPS;
    const outAmount = route.outAmount - platformFee;
    if (outAmount <= 0n)
      throw new OrderRefused("zero_out_amount", "the route pays nothing for this amount after fees");
    const impact = priceImpact(route);
    if (impact * 100 > request.priceImpactTolerancePct) {
      throw new OrderRefused(
        "price_impact_too_high",
        `the route's price impact is ${(impact * 100).toFixed(2)}%, above priceImpactTolerancePct ${request.priceImpactTolerancePct}%`,
      );
    }
    const slippageBps = request.slippageBps ?? AUTO_SLIPPAGE_BPS;
    const threshold = (outAmount * (BPS - BigInt(slippageBps))) / BPS;
    return { input, output, clock, route, platformFee, outAmount, impact, slippageBps, threshold };
  }

  /** Quotes `request` and, with a user, issues its transaction; `client` is who asks, for the bounds of firm quotes. */
  async order(request: OrderRequest, client: ClientId = "local"): Promise<OrderResponse> {
    const priced = await this.price(request);
    const { input, clock, route, platformFee, outAmount, impact, slippageBps, threshold } = priced;
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
    const user = request.userPublicKey;
    if (route.executionMode === "async") {
      // An outcome order that cannot fill (or the part of it that cannot) returns the input.
      response.revertMint = request.inputMint;
      response.predictionMarketSlippageBps = request.predictionMarketSlippageBps ?? slippageBps;
      if (!user) return response;
      if (request.destinationWallet && request.destinationWallet !== user) {
        throw new OrderRefused(
          "invalid_destination_wallet",
          "destinationWallet: prediction-market orders deliver to userPublicKey on this venue",
        );
      }
      if (!this.orders)
        throw new OrderRefused("route_not_found", "this venue takes no prediction-market orders");
      // Nothing is held for an async order, so its funds are checked only against itself.
      const balance = await this.balanceOf(user, input, false);
      this.firmQuotes.admit(
        { wallet: user, client, inputMint: input.mint, inAmount: request.amount, balance },
        clock.blockHeight,
      );
      const opened = await issuePredictionOrder(this.orders, { ...request, userPublicKey: user }, priced);
      return { ...response, ...opened, prioritizationFeeLamports: 0 };
    }
    const nativeSolOut = request.wrapAndUnwrapSol && priced.output.mint === WRAPPED_SOL_MINT;
    if (request.destinationWallet && request.destinationWallet !== user && nativeSolOut) {
      throw new OrderRefused(
        "invalid_destination_wallet",
        "destinationWallet: native SOL is delivered to userPublicKey only; send wrapAndUnwrapSol=false to deliver wrapped SOL",
      );
    }
    if (!user) return response;
    return this.issue({ ...request, userPublicKey: user }, client, priced, route, response);
  }

  /** Issues a firm spot quote's transaction, signed by its pools, holding their output for the user. */
  private async issue(
    request: OrderRequest & { userPublicKey: Address },
    client: ClientId,
    priced: PricedRoute,
    route: SyncRoute<VenueMarket>,
    response: OrderResponse,
  ): Promise<OrderResponse> {
    const { input, output, clock, platformFee, outAmount } = priced;
    const firm = {
      wallet: request.userPublicKey,
      client,
      inputMint: request.inputMint,
      inAmount: route.inAmount,
      balance: await this.balanceOf(request.userPublicKey, input, request.wrapAndUnwrapSol),
    };
    // From the admission to the holds nothing awaits, so a concurrent quote already prices without these tokens.
    const { lastValidBlockHeight } = clock.latest;
    this.firmQuotes.admit(firm, clock.blockHeight);
    const legs = route.legs.map((leg, index) => ({
      pool: leg.market,
      inputMint: leg.inputMint,
      inAmount: leg.inAmount,
      outputMint: leg.outputMint,
      maxOut: index === route.legs.length - 1 ? outAmount + platformFee : leg.outAmount,
    }));
    const swap = { payer: request.userPublicKey, payerSignedByVenue: false, legs };
    const holds = legs.map((leg) => leg.pool.reserve(leg.outputMint, leg.maxOut, lastValidBlockHeight));
    const microLamports =
      request.computeUnitPriceMicroLamports ??
      (BigInt(request.prioritizationFeeLamports) * 1_000_000n) / BigInt(ORDER_COMPUTE_UNIT_LIMIT);
    try {
      const wire = await buildOrderTransaction({
        user: request.userPublicKey,
        recipient: request.destinationWallet ?? request.userPublicKey,
        legs: route.legs,
        userOutAmount: outAmount,
        platformFee: request.feeAccount ? { amount: platformFee, account: request.feeAccount } : undefined,
        tokens: { input, output, token: (mint) => this.token(mint) },
        wrapAndUnwrapSol: request.wrapAndUnwrapSol,
        computeUnitLimit: ORDER_COMPUTE_UNIT_LIMIT,
        microLamportsPerComputeUnit: microLamports,
        lifetime: clock.latest,
        beforeSigning: (message, instructions, signers) =>
          checkMessageBeforeSigning(message, instructions, signers, swap, this.book),
      });
      this.firmQuotes.add(firm, lastValidBlockHeight, holds);
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
      // Not issued (the signing guard refused it, or building failed): the output is free again.
      for (const hold of holds) hold.release();
      throw error;
    }
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

  /** Refuses a fee account that is not the user's to name: a venue account, or not a token account of the output mint. */
  private async checkFeeAccount(feeAccount: Address, output: TokenRecord): Promise<void> {
    if (this.book.isVenueAccount(feeAccount))
      throw new OrderRefused(
        "invalid_fee_account",
        `feeAccount ${feeAccount} is one of the venue's own accounts`,
      );
    const account = await this.chain.getTokenAccount(feeAccount);
    if (!account || account.mint !== output.mint) {
      throw new OrderRefused(
        "invalid_fee_account",
        `feeAccount ${feeAccount} must be an existing token account of the output mint ${output.mint}`,
      );
    }
    if (this.book.isVenueAccount(account.owner)) {
      throw new OrderRefused(
        "invalid_fee_account",
        `feeAccount ${feeAccount} belongs to ${account.owner}, one of the venue's own accounts`,
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
