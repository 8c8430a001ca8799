/**
 * An order's terms: what a request asks for, once its parameters are checked (`routes/order-params.ts`),
 * and what pricing made of it. The order desk produces them; `/order`'s spot and prediction paths and
 * `/intent` consume them.
 */
import type { Address } from "@solana/kit";
import type { ChainClock } from "./book.js";
import type { VenueMarket } from "./market.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route } from "./router.js";

/** What `slippageBps=auto` resolves to. */
export const AUTO_SLIPPAGE_BPS = 50;

export interface OrderRequest {
  inputMint: Address;
  outputMint: Address;
  amount: bigint;
  /** Undefined for `auto`. */
  slippageBps: number | undefined;
  predictionMarketSlippageBps: number | undefined;
  userPublicKey: Address | undefined;
  /** Whose account receives the output (its associated token account, created if missing); default the user. */
  destinationWallet: Address | undefined;
  priceImpactTolerancePct: number;
  dexes: string[] | undefined;
  excludeDexes: string[] | undefined;
  onlyDirectRoutes: boolean;
  maxRouteLength: number;
  platformFeeBps: number;
  feeAccount: Address | undefined;
  /** The priority fee for the whole transaction when the price per compute unit is not given. */
  prioritizationFeeLamports: number;
  /** The price per compute unit, when the caller names it instead of a fee in lamports. */
  computeUnitPriceMicroLamports: bigint | undefined;
  wrapAndUnwrapSol: boolean;
  /** Whether routes executed in the order's own transaction (sync) or settled later (async) may be used. */
  allowSyncExec: boolean;
  allowAsyncExec: boolean;
}

/** A request routed and priced, before any transaction. */
export interface PricedRoute {
  input: TokenRecord;
  output: TokenRecord;
  clock: ChainClock;
  route: Route<VenueMarket>;
  platformFee: bigint;
  /** What the user receives: the route's output less the platform fee. */
  outAmount: bigint;
  impact: number;
  slippageBps: number;
  threshold: bigint;
}
