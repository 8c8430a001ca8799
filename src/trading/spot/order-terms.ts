/**
 * An order's terms: what a request asks for, once its parameters are checked (`routes/order-params.ts`),
 * and what pricing made of it. The order desk produces them; `/order`'s spot and prediction paths and
 * `/intent` consume them.
 */
import type { VenueMarket } from "./market.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route } from "./router.js";
import type { ChainClock } from "./trading-book.js";

// The request is declared with its parameters, where its type derives from them.
export type { OrderRequest } from "../routes/order-request.js";

/** What `slippageBps=auto` resolves to. */
export const AUTO_SLIPPAGE_BPS = 50;

/** A request routed and priced, before any transaction. */
export interface PricedRoute {
  input: TokenRecord;
  output: TokenRecord;
  clock: ChainClock;
  route: Route<VenueMarket>;
  /** The platform fee, in the input mint (taken off the amount before routing) or the output mint. */
  platformFee: bigint;
  feeMode: "inputMint" | "outputMint";
  /** What the user receives: the route's output less an output-mint platform fee. */
  outAmount: bigint;
  impact: number;
  slippageBps: number;
  threshold: bigint;
}
