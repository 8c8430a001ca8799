/**
 * Declarative trades: `GET /intent` prices an order and issues its open transaction, sealed with the
 * venue's secret; `POST /submit-intent` accepts only that transaction, unchanged, signed by the
 * quote's user, before it expires, with the quote exactly as issued, and sends it itself. The same
 * signed transaction submitted again gets the first answer, and is never executed twice.
 *
 * Only a definite refusal by the chain fails the order. When the send's outcome is unknown (the chain
 * unreachable or silent: the transaction may have landed) the order stays pending with the keeper,
 * which settles it once if it landed and expires it once its blockhash is past; the caller is told to
 * poll `/order-status`, and a resubmission is answered from where the order stands then.
 */
import { randomBytes } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { addressBytes, addressOf, encodeBase58, encodeSignature, isAddressText } from "../../chain/base58.js";
import type { Chain } from "../../chain/chain.js";
import { verifySignature } from "../../chain/ed25519.js";
import { sendFailureOf } from "../../chain/errors.js";
import { parseWireTransaction, type WireTransaction } from "../../chain/wire.js";
import type { IntentQuoteResponse, SubmitIntentResponse } from "../../contract/trade.js";
import type { Tables } from "../../storage/database.js";
import { storageOutageCode } from "../../storage/outage.js";
import {
  IntentOutcomeUnknown,
  type IntentRefusal,
  IntentRefused,
  OrderRefused,
  StorageUnavailable,
} from "../errors.js";
import { formatFraction, type OrderDesk } from "../spot/desk.js";
import type { OrderRequest } from "../spot/order-terms.js";
import type { PoolAuthorities } from "../spot/pools/authority.js";
import type { TokenRecord } from "../spot/pools/store.js";
import type { TradingBook } from "../spot/trading-book.js";
import { associatedTokenAddress } from "../tx/token-accounts.js";
import { signedTransaction } from "../tx/transaction.js";
import { INTENT_EXPIRY_SLOTS, openMemoOf, openMessage } from "./escrow.js";
import type { OrderKeeper } from "./keeper.js";
import {
  insertOrder,
  type NewOrder,
  newOrderRecord,
  type OrderRecord,
  orderById,
  orderBySignature,
  recordAnswer,
  transition,
} from "./order-store.js";

export { MIN_FEE_BUDGET } from "./escrow.js";

export type { IntentQuoteResponse, SubmitIntentResponse };

/**
 * A stored answer: what `/submit-intent` said the first time. `unknown`: the chain neither confirmed
 * nor refused the open transaction, so a resubmission is answered from the order's status then.
 */
type StoredAnswer =
  | { ok: SubmitIntentResponse }
  | { error: { code: IntentRefusal; msg: string } }
  // Refused by the chain, with the answer owed should its user land the transaction himself.
  | { error: { code: IntentRefusal; msg: string }; ok: SubmitIntentResponse }
  | { unknown: SubmitIntentResponse };

/** The input and output tokens of an intent. */
interface IntentTokens {
  input: TokenRecord;
  output: TokenRecord;
}

/**
 * Open messages issued and not yet submitted, kept so that a submission compares its message with
 * the issued bytes instead of building them again (~50 µs a submission); one not kept is rebuilt.
 * Counted through maxSize: max would allocate all its slots at start.
 */
const ISSUED_MESSAGES_KEPT = 4_096;

/** Prices intents and opens the ones their users sign. */
export class IntentDesk {
  private readonly issued = new LRUCache<string, Uint8Array>({
    maxSize: ISSUED_MESSAGES_KEPT,
    sizeCalculation: () => 1,
  });

  constructor(
    private readonly deps: {
      db: Kysely<Tables>;
      chain: Chain;
      book: TradingBook;
      desk: OrderDesk;
      authorities: PoolAuthorities;
      keeper: OrderKeeper;
    },
  ) {}

  /**
   * Prices an intent and, with a user, issues its open transaction paying at most `feeBudget` in fees.
   * (An argument, not a key added to a copy of the request: see `parseParams` on what those cost.)
   */
  async intent(request: OrderRequest, feeBudget: bigint): Promise<IntentQuoteResponse> {
    const priced = await this.deps.desk.price(request);
    if (priced.route.executionMode !== "sync") {
      throw new OrderRefused(
        "route_not_found",
        "intents trade spot routes only; use /order for outcome tokens",
      );
    }
    const quote: IntentQuoteResponse = {
      inputMint: request.inputMint,
      inAmount: priced.route.inAmount.toString(),
      outputMint: request.outputMint,
      outAmount: priced.outAmount.toString(),
      otherAmountThreshold: priced.threshold.toString(),
      minOutAmount: priced.threshold.toString(),
      slippageBps: priced.slippageBps,
      feeBudget: Number(feeBudget),
      priceImpactPct: formatFraction(priced.impact),
    };
    // Taken out of the output when the intent fills: the quote says how much at the quoted output.
    if (request.platformFeeBps > 0 && request.feeAccount)
      quote.platformFee = {
        amount: priced.platformFee.toString(),
        feeBps: request.platformFeeBps,
        feeAccount: request.feeAccount,
        segmenterFeeAmount: "0",
        segmenterFeePct: 0,
      };
    if (!request.userPublicKey) return quote;
    const { latest } = priced.clock;
    quote.lastValidBlockHeight = Number(latest.lastValidBlockHeight);
    quote.expiry = { slotsAfterOpen: INTENT_EXPIRY_SLOTS };
    const orderId = randomBytes(12).toString("hex");
    const message = await this.openMessageFor(
      orderId,
      request.userPublicKey,
      latest.blockhash,
      quote,
      priced,
    );
    quote.openTransaction = Buffer.from(signedTransaction(message, [])).toString("base64");
    this.issued.set(orderId, message.bytes);
    return quote;
  }

  /**
   * Checks a signed open transaction against what the venue issued, then sends it (once). Throws
   * IntentRefused when it is not accepted or the chain refused it, IntentOutcomeUnknown when the
   * chain did not say, StorageUnavailable when storage is out of reach.
   */
  async submit(quote: IntentQuoteResponse, signedOpenTransaction: string): Promise<SubmitIntentResponse> {
    try {
      return await this.checkAndSend(quote, signedOpenTransaction);
    } catch (error) {
      const outage = storageOutageCode(error);
      if (outage === undefined) throw error;
      throw new StorageUnavailable(
        `storage is unavailable (${outage}); retry: submitting the same signed transaction again is safe`,
        { cause: error },
      );
    }
  }

  private async checkAndSend(
    quote: IntentQuoteResponse,
    signedOpenTransaction: string,
  ): Promise<SubmitIntentResponse> {
    const tx = parse(signedOpenTransaction);
    const signature = encodeSignature(tx.signatures[0] as Uint8Array);
    const known = await orderBySignature(this.deps.db, signature);
    if (known) return answerOf(known);

    const user = addressOf(tx.accountKeys[0] as Uint8Array);
    const memo = openMemoOf(tx);
    if (!memo)
      throw new IntentRefused(
        "invalid_open_transaction",
        "this is not an open transaction this venue issued",
      );
    const blockhash = encodeBase58(tx.recentBlockhash);
    if (this.seal(memo.orderId, user, blockhash, quote) !== memo.seal) {
      throw new IntentRefused(
        "invalid_quote_response",
        "quoteResponse is not the quote issued with this open transaction (every field must come back unchanged)",
      );
    }
    const input = this.tradedToken(quote.inputMint);
    const output = this.tradedToken(quote.outputMint);
    if (!input || !output)
      throw new IntentRefused(
        "invalid_quote_response",
        "quoteResponse names a token this venue does not trade",
      );
    // The seal held, so the terms are those issued: the message issued for them, kept or rebuilt.
    const expected =
      this.issued.get(memo.orderId) ??
      (await this.openMessageFor(memo.orderId, user, blockhash, quote, { input, output })).bytes;
    const issued = quote.openTransaction ? parse(quote.openTransaction).message : undefined;
    if (!Buffer.from(expected).equals(tx.message) || !issued || !Buffer.from(issued).equals(tx.message)) {
      throw new IntentRefused("invalid_open_transaction", "the open transaction differs from the one issued");
    }
    this.issued.delete(memo.orderId);
    if (
      tx.signatures.length !== 1 ||
      !verifySignature(addressBytes(user), tx.message, tx.signatures[0] as Uint8Array)
    ) {
      throw new IntentRefused("invalid_signature", `the open transaction is not validly signed by ${user}`);
    }
    if (this.deps.book.clock.blockHeight > BigInt(quote.lastValidBlockHeight ?? 0)) {
      throw new IntentRefused(
        "open_transaction_expired",
        `the open transaction expired at block height ${quote.lastValidBlockHeight}; request a new intent`,
      );
    }
    const escrow = this.deps.authorities.orderAuthority(memo.orderId).address;
    // The order's account is its escrow, a token account of the input mint: `programId` owns it and
    // decodes it (mint, amount held, the order's authority as owner) while the order holds its input.
    const answer: SubmitIntentResponse = {
      programId: input.program,
      orderAddress: associatedTokenAddress(escrow, input.mint, input.program),
      openTransactionSignature: signature,
    };
    const order: NewOrder = {
      id: memo.orderId,
      kind: "intent",
      status: "pending",
      user,
      inputMint: input.mint,
      outputMint: output.mint,
      inAmount: BigInt(quote.inAmount),
      threshold: BigInt(quote.otherAmountThreshold),
      escrow,
      openSignature: signature,
      openWire: signedOpenTransaction,
      openValidHeight: BigInt(quote.lastValidBlockHeight ?? 0),
      expirySlots: quote.expiry?.slotsAfterOpen ?? INTENT_EXPIRY_SLOTS,
      feeBudget: BigInt(quote.feeBudget),
      answer: JSON.stringify({ ok: answer } satisfies StoredAnswer),
      // As sealed into the open transaction: the quote's fee terms cannot have been changed.
      ...(quote.platformFee
        ? { terms: { platformFee: { bps: quote.platformFee.feeBps, account: quote.platformFee.feeAccount } } }
        : {}),
    };
    this.deps.book.addOrderEscrow(escrow);
    if (!(await insertOrder(this.deps.db, order))) return this.firstAnswer(signature);
    try {
      // Its one signature was verified above, over these bytes.
      await this.deps.chain.sendTransaction(Buffer.from(signedOpenTransaction, "base64"), {
        signaturesChecked: true,
      });
    } catch (error) {
      // "landed" (the chain already holds it: the caller, or a keeper resending, sent it first) says
      // nothing of whether it succeeded there: like an unknown outcome, the keeper's reading of its
      // status decides, and the caller is answered from the order's status.
      if (sendFailureOf(error) === "refused") return this.refused(order, answer, error);
      return this.outcomeUnknown(order, answer);
    }
    this.deps.keeper.opened(newOrderRecord(order));
    return answer;
  }

  /**
   * The chain refused the open transaction, so nothing moved yet: the caller is refused, and a
   * resubmission gets the same answer. The order stays pending, watched but never sent again, until
   * its blockhash expires: the user holds the signed transaction and may land it himself once it can
   * pass (funds arrive), and its escrow must then be settled like any other, not stranded by a
   * `failed` the keeper no longer looks at. Should the keeper have moved it on first (it saw the
   * transaction land), it answers from there instead.
   */
  private async refused(
    order: NewOrder,
    answer: SubmitIntentResponse,
    error: unknown,
  ): Promise<SubmitIntentResponse> {
    const refusal = {
      code: "open_transaction_simulation_failed",
      msg: `the chain refused the open transaction: ${error instanceof Error ? error.message : String(error)}`,
    } as const;
    const recorded = await transition(this.deps.db, order.id, "pending", {
      openWire: null,
      answer: JSON.stringify({ error: refusal, ok: answer } satisfies StoredAnswer),
    });
    if (recorded) throw new IntentRefused(refusal.code, refusal.msg);
    const stored = await orderById(this.deps.db, order.id);
    if (!stored) throw new Error(`order ${order.id} is gone`);
    return answerOf(stored);
  }

  /**
   * The send failed without saying whether the transaction landed. The order stays pending, where
   * the keeper watches its signature (and sends it again while it can land); resubmissions are
   * answered from its status. Throws the retryable answer.
   */
  private async outcomeUnknown(order: NewOrder, answer: SubmitIntentResponse): Promise<never> {
    // Best effort: the caller must hear that the outcome is unknown even if storage fails too; the
    // order is stored pending either way, so the keeper follows it, and a resubmission then gets
    // the first answer (the order's address and signature) rather than this one.
    await recordAnswer(
      this.deps.db,
      order.id,
      JSON.stringify({ unknown: answer } satisfies StoredAnswer),
    ).catch(() => {});
    this.deps.keeper.opened(newOrderRecord(order));
    throw outcomeUnknownError(order);
  }

  /** A token the venue trades, named by a quote's mint (text from the request). */
  private tradedToken(mint: string): TokenRecord | undefined {
    return isAddressText(mint) ? this.deps.book.token(mint) : undefined;
  }

  private openMessageFor(
    orderId: string,
    user: Address,
    blockhash: string,
    quote: IntentQuoteResponse,
    { input, output }: IntentTokens,
  ) {
    return openMessage({
      orderId,
      seal: this.seal(orderId, user, blockhash, quote),
      user,
      escrow: this.deps.authorities.orderAuthority(orderId).address,
      input,
      output,
      amount: BigInt(quote.inAmount),
      feeBudget: BigInt(quote.feeBudget),
      // With wrapped SOL as input the escrow is always funded from native SOL (the user's wSOL stays).
      wrapSol: true,
      blockhash,
      // Legacy, not v0: the reference's clients read it with web3.js 1.x `Transaction.from`, which
      // throws on a versioned message. /submit-intent rebuilds it here too, so both sides agree.
      format: "legacy",
    });
  }
  /** The venue's seal over an intent's terms: any change to them, or to the user or blockhash, breaks it. */
  private seal(orderId: string, user: string, blockhash: string, quote: IntentQuoteResponse): string {
    return this.deps.authorities.seal(
      JSON.stringify([
        orderId,
        user,
        blockhash,
        quote.inputMint,
        quote.inAmount,
        quote.outputMint,
        quote.outAmount,
        quote.otherAmountThreshold,
        quote.minOutAmount,
        quote.slippageBps,
        quote.feeBudget,
        quote.priceImpactPct,
        quote.lastValidBlockHeight,
        quote.expiry?.slotsAfterOpen,
        quote.platformFee
          ? [quote.platformFee.amount, quote.platformFee.feeBps, quote.platformFee.feeAccount]
          : null,
      ]),
    );
  }

  /** A concurrent submission of the same transaction waits for the first one's answer. */
  private async firstAnswer(signature: string): Promise<SubmitIntentResponse> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const order = await orderBySignature(this.deps.db, signature);
      const stored = order && storedAnswer(order);
      if (order && (order.status !== "pending" || stored?.unknown || stored?.error || attempt === 99)) {
        return answerOf(order);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the first submission of this transaction did not finish");
  }
}

function parse(base64: string): WireTransaction {
  try {
    const tx = parseWireTransaction(Buffer.from(base64, "base64"));
    if (tx.signatures.length === 0 || tx.accountKeys.length === 0) throw new Error("no signer");
    return tx;
  } catch {
    throw new IntentRefused(
      "invalid_open_transaction",
      "signedOpenTransaction is not a base64 Solana transaction",
    );
  }
}

/** A stored answer with each variant as an optional field. */
interface StoredAnswerFields {
  ok?: SubmitIntentResponse;
  error?: { code: IntentRefusal; msg: string };
  unknown?: SubmitIntentResponse;
}

/** An order's stored answer. */
function storedAnswer(order: OrderRecord): StoredAnswerFields {
  const answer = JSON.parse(order.answer ?? "null") as StoredAnswer | null;
  if (!answer) throw new Error("the order has no recorded answer");
  return answer;
}

/**
 * What a resubmission of an order's open transaction is answered: the first answer, or, when that
 * was an unknown outcome, what the order's status says now.
 */
function answerOf(order: OrderRecord): SubmitIntentResponse {
  const answer = storedAnswer(order);
  if (answer.error) {
    // Refused, then landed by its user all the same: it settles like any other and is answered so.
    const landed = order.status === "open" || order.status === "pendingClose" || order.status === "closed";
    if (answer.ok && landed) return answer.ok;
    throw new IntentRefused(answer.error.code, answer.error.msg);
  }
  if (answer.ok) return answer.ok;
  if (!answer.unknown) throw new Error("the order has no recorded answer");
  switch (order.status) {
    case "pending":
      throw outcomeUnknownError(order);
    case "expired":
      throw new IntentRefused(
        "open_transaction_expired",
        `the open transaction never landed and expired at block height ${order.openValidHeight}; nothing moved; request a new intent`,
      );
    case "failed":
      throw new IntentRefused(
        "open_transaction_simulation_failed",
        "the open transaction failed on the chain; nothing but its fee was taken",
      );
    default:
      return answer.unknown;
  }
}

/** The retryable answer for an order whose open transaction may or may not have landed. */
function outcomeUnknownError(
  order: Pick<OrderRecord, "openSignature" | "openValidHeight">,
): IntentOutcomeUnknown {
  return new IntentOutcomeUnknown(
    `the chain did not confirm the open transaction ${order.openSignature}, and whether it landed is not known yet. ` +
      `The venue keeps following it: the order settles if it landed, or expires with nothing moved once block height ` +
      `${order.openValidHeight} is past. Poll /order-status?signature=${order.openSignature}; submitting the same signed transaction again is safe`,
  );
}
