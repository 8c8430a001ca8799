/**
 * An order's terms: what a request asks for, once its parameters are checked (`routes/order-params.ts`),
 * and what pricing made of it. The order desk produces them; `/order`'s spot and prediction paths and
 * `/intent` consume them.
 */
import type { Address } from "@solana/kit";
import type { OrderRefusal } from "../errors.js";
import type { VenueMarket } from "./market.js";
import type { TokenRecord } from "./pools/store.js";
import type { Route } from "./router.js";
import type { ChainClock } from "./trading-book.js";

/** Solana's limits on one transaction: accounts it may lock, and bytes on the wire. */
export const TRANSACTION_MAX_ACCOUNTS = 64;
export const TRANSACTION_MAX_SIZE = 1232;

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
  /**
   * The priority fee for the whole transaction when the price per compute unit is not given; with a
   * `priorityLevel`, the most that level may cost.
   */
  prioritizationFeeLamports: number;
  /** A level of what recent transactions paid (`auto` is medium), when the caller names a level rather than lamports. */
  priorityLevel?: PriorityLevelRequest;
  /** The price per compute unit, when the caller names it instead of a fee in lamports. */
  computeUnitPriceMicroLamports: bigint | undefined;
  wrapAndUnwrapSol: boolean;
  /** Whether routes executed in the order's own transaction (sync) or settled later (async) may be used. */
  allowSyncExec: boolean;
  allowAsyncExec: boolean;
  /** Pays the transaction fee and the rent of accounts it creates, and signs; the user signs for its tokens. */
  sponsor: Address | undefined;
  /** With a sponsor: whether the sponsor executes (sends) the order; default true. */
  sponsorExec: boolean;
  /** An existing token account of the output mint that receives the output, instead of the user's. */
  destinationTokenAccount: Address | undefined;
  /** The close authority the user's output account is created with. */
  outputCloseAuthority: Address | undefined;
  /** Checked only: a firm quote delivers exactly its output, so there is no positive slippage to collect. */
  positiveSlippageFeeAccount: Address | undefined;
  /** Which mint the platform fee is taken in (spot orders). */
  platformFeeMode: "outputMint" | "inputMint";
  /** Prediction-market builder fee k in thousandths: fee = k·p·(1−p)·contracts, in the settlement mint. */
  platformFeeScale: number;
  /** Async orders: who receives the revert mint if the order reverts; default the user. */
  revertWallet: Address | undefined;
  /** Async orders: the revert mint must be the input mint. */
  restrictRevertMint: boolean;
  /** Pays a prediction market's initialization when it is not initialized yet (must sign). */
  predictionMarketInitPayer: Address | undefined;
  /** Receives the rent of an emptied outcome account when it is closed; default the user. */
  outcomeAccountRentRecipient: Address | undefined;
  /** Simulate the transaction and ask for the compute units it uses instead of the default limit. */
  dynamicComputeUnitLimit: boolean;
  /** Most accounts the transaction may lock (the chain's 64 unless asked for fewer). */
  maxAccounts: TransactionLimit;
  /** Most bytes the transaction may take on the wire (the chain's 1232 unless asked for fewer). */
  maxTransactionSize: TransactionLimit;
  /** Return the lookup tables the transaction uses. */
  includeAddressLookupTables: boolean;
  /** POST /swap: the least output the quote being executed promised (its otherAmountThreshold). */
  minOutAmount?: bigint;
}

/** The priority levels of `GET /priority-fees`. */
export type PriorityLevel = "medium" | "high" | "veryHigh";

/** A priority fee asked for as a level of the chain's recent fees, times a multiplier. */
export interface PriorityLevelRequest {
  level: PriorityLevel;
  multiplier: number;
  /** The level's price per compute unit, read when the order is priced. */
  microLamports?: bigint;
}

/** A limit on the transaction, and the refusal when no route's transaction fits under it. */
export interface TransactionLimit {
  limit: number;
  refusal: Extract<
    OrderRefusal,
    | "max_accounts_too_small"
    | "reserve_accounts_too_large"
    | "max_transaction_size_too_small"
    | "reserve_transaction_size_too_large"
  >;
}

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
