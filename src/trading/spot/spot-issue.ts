/**
 * The build step of a checked spot order: its pools' output held for the user, its transaction built
 * (sized by simulation when asked), the signing guard run on it before the pools sign, and the
 * response with the transaction (or the signed instructions of `/swap-instructions`).
 */
import type { Address } from "@solana/kit";
import type { Chain } from "../../chain/chain.js";
import { parseWireTransaction } from "../../chain/wire.js";
import type { OrderResponse } from "../../contract/trade.js";
import { TradingNotReady } from "../errors.js";
import type { ReservationStore } from "../quotes/firm-quotes.js";
import { type FamilyRequest, familyKeyOf, pairKeyOf } from "../quotes/quote-family.js";
import { TICKET_LAMPORTS } from "../quotes/quote-ticket.js";
import {
  computeBudgetFields,
  computeUnitPriceFor,
  MAX_COMPUTE_UNIT_LIMIT,
  simulatedComputeUnitLimit,
} from "../tx/compute-budget.js";
import {
  buildOrderTransaction,
  ORDER_COMPUTE_UNIT_LIMIT,
  type OrderTransactionInput,
  orderInstructions,
} from "../tx/order-transaction.js";
import { checkMessageBeforeSigning, checkVenueSignatures } from "../tx/signing-guard.js";
import type { SyncMarket, VenueMarket } from "./market.js";
import type { CheckedSpotOrder } from "./order-checks.js";
import { type PricedOrder, routeToken } from "./order-pricing.js";
import type { OrderRequest } from "./order-terms.js";
import { TRANSACTION_MAX_ACCOUNTS, type TransactionLimit } from "./request-limits.js";
import type { SyncRoute } from "./router.js";
import { type SignedInstructionSet, signInstructionSet } from "./swap-instructions.js";
import type { TradingBook } from "./trading-book.js";

/** How an order is issued: as one transaction (`/order`, `/swap`) or as instructions (`/swap-instructions`). */
export interface IssueOptions {
  shape: "transaction" | "instructions";
  /** Where pricing started (`ReservationStore.view`). */
  view?: number;
  /** Times the order was priced again after a conflict with another instance's holds. */
  attempt?: number;
}

/** An order's response, and with the instructions shape the instructions the pools signed. */
export type IssuedOrder = OrderResponse & { instructionSet?: SignedInstructionSet };

/** A spot order for a user, priced over a sync route and checked. */
export interface SpotOrder {
  request: OrderRequest & { userPublicKey: Address };
  priced: PricedOrder["priced"];
  response: OrderResponse;
  route: SyncRoute<VenueMarket>;
  checked: CheckedSpotOrder;
  client: string;
}

/** A transaction over the caller's size limits: the refusal names the limit. */
export class TransactionTooLarge extends Error {
  constructor(
    readonly refusal: TransactionLimit["refusal"],
    message: string,
  ) {
    super(message);
  }
}

export class SpotOrderBuilder {
  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    private readonly firmQuotes: ReservationStore,
  ) {}

  /** Issues a firm spot quote's transaction, signed by its pools, holding their output for the user. */
  async issue(order: SpotOrder, options: IssueOptions): Promise<IssuedOrder> {
    const { request, priced, route, checked } = order;
    const { input, output, clock, platformFee, feeMode, outAmount } = priced;
    const user = request.userPublicKey;
    const feePayer = request.sponsor ?? user;
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
      client: order.client,
      inputMint: request.inputMint,
      inAmount: route.inAmount + (feeMode === "inputMint" ? platformFee : 0n),
      holds: legs.map((leg) => {
        const side = leg.pool.sideOf(leg.outputMint);
        return { side: `${leg.pool.key}:${side}`, amount: leg.maxOut, reserve: leg.pool.balance(side) };
      }),
      balance: checked.balance,
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
      await this.familyOf(order),
    );
    const { holds, ticket } = admitted;
    const swap = { payer: user, feePayer, payerSignedByVenue: false, legs, ticket };
    const transactionInput = (limit: number, microLamports: bigint): OrderTransactionInput => ({
      user,
      feePayer,
      destination: checked.destination,
      outputCloseAuthority: request.outputCloseAuthority,
      legs: route.legs,
      userOutAmount: outAmount,
      platformFee: request.feeAccount
        ? { amount: platformFee, account: request.feeAccount, mode: feeMode }
        : undefined,
      tokens: { input, output, token: (mint) => routeToken(this.book, mint) },
      wrapAndUnwrapSol: request.wrapAndUnwrapSol,
      computeUnitLimit: limit,
      microLamportsPerComputeUnit: microLamports,
      lifetime: clock.latest,
      ticket,
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
        ...order.response,
        transaction: Buffer.from(wire).toString("base64"),
        lastValidBlockHeight: Number(lastValidBlockHeight),
        ...computeBudgetFields(limit, microLamports),
        // The venue's transactions load no lookup tables: asked for them, the list is empty.
        ...(request.includeAddressLookupTables ? { addressLookupTables: [] } : {}),
      };
    } catch (error) {
      // Not issued (the signing guard refused it, or building failed): what it alone held is free again.
      admitted.cancel();
      throw error;
    }
  }

  /**
   * The quote family an order joins (`quote-family.ts`), ended first when its ticket exists (one of
   * its transactions landed). A new family's ticket is paid by its first pool's authority: one that
   * cannot pay it is refused.
   */
  private async familyOf(order: SpotOrder): Promise<FamilyRequest> {
    const { request, route } = order;
    const pools = route.legs.map((leg) => leg.market);
    const base = (pools[0] as SyncMarket).authority.address;
    const pair = pairKeyOf(order.client, request.userPublicKey, request.inputMint, request.outputMint);
    const key = familyKeyOf(
      pair,
      pools.map((pool) => pool.key),
    );
    const known = await this.firmQuotes.ticketOf(key);
    const landed = known && (await this.chain.getBalance(known.address)) > 0n ? known.seed : undefined;
    if ((!known || landed) && (await this.chain.getBalance(base)) < TICKET_LAMPORTS)
      throw new TradingNotReady(
        "pools",
        `pool ${pools[0]?.key}'s authority holds too little SOL to pay its quotes' tickets; its operator must fund it`,
      );
    return { key, base, ...(landed ? { landed } : {}) };
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
