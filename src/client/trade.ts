/** Typed client for the trade API (root paths): tokens, venues and orders, plus signing an order. */
import { getTransactionDecoder, getTransactionEncoder, type SignatureBytes } from "@solana/kit";
import type { OrderResponse } from "../contract/trade.js";
import { ApiTransport, type ClientOptions } from "./http.js";

export type { OrderResponse, RoutePlanLeg } from "../contract/trade.js";

/** What signs for the user: its address and a synchronous ed25519 signature over a message. */
export interface OrderSigner {
  readonly address: string;
  sign(message: Uint8Array): Uint8Array;
}

export interface OrderParams {
  inputMint: string;
  outputMint: string;
  /** In the input token's smallest unit. */
  amount: bigint | number | string;
  /** Basis points, or "auto" (the default). */
  slippageBps?: number | "auto";
  /** With it, the response carries the transaction to sign. */
  userPublicKey?: string;
  priceImpactTolerancePct?: number;
  dexes?: string[];
  excludeDexes?: string[];
  onlyDirectRoutes?: boolean;
  maxRouteLength?: number;
  platformFeeBps?: number;
  feeAccount?: string;
  prioritizationFeeLamports?: number | "auto" | "medium" | "high" | "veryHigh" | "disabled";
  wrapAndUnwrapSol?: boolean;
}

export class TradeClient {
  private readonly transport: ApiTransport;

  constructor(options: ClientOptions) {
    this.transport = new ApiTransport(options, "");
  }

  /** `[mint, decimals]` of every token the venue ever traded. */
  tokensWithDecimals(): Promise<[string, number][]> {
    return this.transport.get("/tokens-with-decimals");
  }

  tokens(): Promise<string[]> {
    return this.transport.get("/tokens");
  }

  venues(): Promise<string[]> {
    return this.transport.get("/venues");
  }

  /** A quote, and with `userPublicKey` the venue-signed transaction that executes it. */
  order(params: OrderParams): Promise<OrderResponse> {
    const { amount, ...rest } = params;
    return this.transport.get("/order", { ...rest, amount: String(amount) });
  }
}

/** Adds the user's signature to an order's base64 transaction; returns the wire bytes to send. */
export function signOrderTransaction(transaction: string, user: OrderSigner): Uint8Array {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  if (!(user.address in decoded.signatures)) {
    throw new Error(`the transaction is not for ${user.address}: it does not ask for its signature`);
  }
  const signature = user.sign(Uint8Array.from(decoded.messageBytes)) as SignatureBytes;
  const signed = { ...decoded, signatures: { ...decoded.signatures, [user.address]: signature } };
  return new Uint8Array(getTransactionEncoder().encode(signed));
}
