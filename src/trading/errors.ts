/**
 * Why the trading venue says no, in its own terms. Where the reference service names a refusal, that
 * name is what the refusal means, so it is kept as the `reason`; `routes/errors.ts` turns each of
 * these (and `FirmQuoteRefused`, `UnsafeTransactionError`) into the catalogue's errors.
 */

/** Why an order or an intent is not quoted or issued. */
export type OrderRefusal =
  | "invalid_input_mint"
  | "invalid_output_mint"
  | "invalid_user_public_key"
  | "invalid_destination_wallet"
  | "invalid_fee_account"
  | "invalid_platform_fee_bps"
  | "route_not_found"
  | "zero_out_amount"
  | "price_impact_too_high"
  | "invalid_sponsor"
  | "invalid_positive_slippage_fee_account"
  | "invalid_destination_token_account"
  | "invalid_output_close_authority"
  | "invalid_revert_wallet"
  | "invalid_prediction_market_init_payer"
  | "invalid_outcome_account_rent_recipient"
  | "invalid_platform_fee_scale"
  | "invalid_input_mint_for_restrict_revert_mint"
  | "unverified_wallet_not_allowed"
  | "max_accounts_too_small"
  | "reserve_accounts_too_large"
  | "max_transaction_size_too_small"
  | "reserve_transaction_size_too_large"
  /** POST /swap: the quote's otherAmountThreshold is no longer met. */
  | "invalid_out_amount"
  /** GET /quote, POST /swap: prediction markets trade through /order only. */
  | "use_order_endpoint_for_prediction_markets";

/** An order (or intent) the venue will not quote or issue. */
export class OrderRefused extends Error {
  override name = "OrderRefused";
  constructor(
    readonly reason: OrderRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Why a signed open transaction submitted for an intent is not accepted. */
export type IntentRefusal =
  | "invalid_open_transaction"
  | "invalid_quote_response"
  | "invalid_signature"
  | "open_transaction_expired"
  | "open_transaction_simulation_failed";

/** A submitted intent the venue will not open. */
export class IntentRefused extends Error {
  override name = "IntentRefused";
  constructor(
    readonly reason: IntentRefusal,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A submitted intent whose open transaction the chain neither confirmed nor refused (the chain
 * unreachable, no answer, an internal error): it may have landed. The order stays with the keeper,
 * which settles it if it landed and expires it (nothing moved) once its blockhash is past.
 */
export class IntentOutcomeUnknown extends Error {
  override name = "IntentOutcomeUnknown";
}

/** Storage a trade needs could not be reached (a database outage): the request can be retried. */
export class StorageUnavailable extends Error {
  override name = "StorageUnavailable";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * State the venue has yet to load before it can quote: its pools, or the chain's clock; or `chain`:
 * the chain's state cannot be trusted now (`Chain.unhealthy`: a sandbox whose lease another instance
 * took), so nothing is quoted or signed from it; or `holds`: other quotes held the order's pools each
 * time it was priced, so its price never stood long enough to hold.
 */
export class TradingNotReady extends Error {
  override name = "TradingNotReady";
  constructor(
    readonly missing: "pools" | "clock" | "chain" | "holds" | "upstream",
    message: string,
  ) {
    super(message);
  }
}
