/**
 * Prediction-market orders (`executionMode: "async"`). `/order` issues an open transaction that puts
 * the input in a per-order escrow, and records the order; the user signs and sends it like a spot
 * trade. The keeper notices the funded escrow and settles it against the venue in the settlement mint
 * of the outcome mint's rail (USDC or CASH): a buy pays it into the treasury and mints whole contracts
 * to the user; a sale or a redemption burns the contracts and pays it from the treasury; whatever
 * cannot fill goes back (a revert). The venue can mint outcome
 * tokens and pay from its treasury only where it holds their keys, i.e. on the sandbox chain. Where
 * the operator requires verified wallets (`WALLET_VERIFICATION`), a buy goes only to one.
 *
 * A buy on a market not yet initialized also pays the market's initialization (see
 * prediction-market-init.ts): the open transaction moves its exact cost to the escrow authority, from
 * the user or from `predictionMarketInitPayer` (who signs too); the keeper initializes the market before
 * it settles the order. A `sponsor` pays the order's lamports (fees, rents, fee budget, initialization)
 * and gets back what settling leaves; the user only signs. Other async parameters: `destinationWallet` receives the output (created in
 * the open transaction, a verified wallet for a buy where verification is on); `revertWallet` receives
 * the revert; `platformFeeScale`
 * takes the builder fee k·p·(1−p)·c in the settlement mint into `feeAccount`; the priority fee and
 * `dynamicComputeUnitLimit` size the open transaction (the one the user sends); `restrictRevertMint` is
 * always met (the revert mint is the input). Refused with their codes, since this venue does not build
 * them for async orders: `platformFeeBps` (the PM fee is `platformFeeScale`),
 * `destinationTokenAccount`, `outputCloseAuthority` and
 * `outcomeAccountRentRecipient` (the open transaction would have to close the user's outcome account
 * before a revert may need it again).
 */
import { randomBytes } from "node:crypto";
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getBurnCheckedInstruction,
  getCloseAccountInstruction,
  getMintToCheckedInstruction,
} from "@solana-program/token";
import type { Kysely } from "kysely";
import type { Chain } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import { LAMPORTS_PER_SIGNATURE } from "../../chain/programs.js";
import type { OrderResponse } from "../../contract/trade.js";
import { SETTLEMENT_MINTS } from "../../markets/accounts.js";
import type { Tables } from "../../storage/database.js";
import { OrderRefused } from "../errors.js";
import type { AdmittedQuote } from "../quotes/firm-quotes.js";
import type { OrderRequest, PricedRoute } from "../spot/order-terms.js";
import type { PoolAuthorities } from "../spot/pools/authority.js";
import type { TradingBook } from "../spot/trading-book.js";
import { BPS } from "../spot/venues/cpmm.js";
import { OutcomeMintMarket } from "../spot/venues/prediction.js";
import {
  computeBudgetFields,
  computeUnitPriceFor,
  MAX_COMPUTE_UNIT_LIMIT,
  simulatedComputeUnitLimit,
} from "../tx/compute-budget.js";
import { computeUnitLimit, createAssociatedTokenIdempotent, tokenTransfer } from "../tx/instructions.js";
import { associatedTokenAddress, checkNamedTokenAccount } from "../tx/token-accounts.js";
import { compileMessage, signedTransaction } from "../tx/transaction.js";
import {
  ESCROW_COMPUTE_UNITS,
  type EscrowedOrder,
  INTENT_EXPIRY_SLOTS,
  MIN_FEE_BUDGET,
  openMessage,
} from "./escrow.js";
import { type InitRents, initPayment, initTerms, type MarketInitDesk } from "./market-init.js";
import { insertOrder, type OrderTerms } from "./order-store.js";
import type { WalletVerification } from "./wallet-verification.js";

/** The venue's own keys on the sandbox chain: the outcome mints' authority and the USDC and CASH treasury. */
export interface VenueSigningKeys {
  mintAuthority: Keypair;
  treasury: Keypair;
}

/**
 * What async orders are recorded with. The book, the chain and the market-initialization desk are
 * optional to callers that only quote; without them no order needing them is issued.
 */
export interface PredictionOrderDeps {
  db: Kysely<Tables>;
  authorities: PoolAuthorities;
  book?: TradingBook;
  chain?: Chain;
  marketInit?: MarketInitDesk;
  /** The verified wallets; when it requires them, buys go only to verified wallets. */
  wallets?: WalletVerification;
}

/** The optional fields of the reference's OrderResponse an async order reports. */
export type AsyncOrderResponse = OrderResponse & {
  isNativePredictionMarketOutput?: boolean;
  initPredictionMarketCost?: number;
  predictionMarketInitPayerMustSign?: boolean;
};

/** A fill against the prediction venue with the builder fee taken: input used (fee included), output delivered. */
export interface PredictionFill {
  /** The input the fill uses: a buy's price plus the fee; a sale's or a redemption's contracts. */
  inAmount: bigint;
  /** What the user receives: a buy's contracts; a sale's settlement mint after the fee. */
  outAmount: bigint;
  /** The builder fee, in the settlement mint. */
  fee: bigint;
}

/**
 * The builder fee (reference §11) in millionths of the settlement mint: k·p·(1−p)·c with k = scale/1000,
 * p the price per contract paid (`value` over c contracts) and c the contracts; rounded down, in the
 * user's favour.
 */
export function builderFee(scale: number, value: bigint, contractUnits: bigint): bigint {
  if (scale === 0 || contractUnits === 0n) return 0n;
  // k·(value/units)·(1 − value/units)·units = k·value·(units − value)/units, with units = c·10^6.
  return (BigInt(scale) * value * (contractUnits - value)) / (1000n * contractUnits);
}

/** The most times a buy's budget is cut to make room for its fee before it is declared unfillable. */
const FEE_FIT_ROUNDS = 8;

/**
 * What `amount` of `inputMint` fills against `market` now, the builder fee at `scale` included: a buy
 * buys as many whole contracts as leave room for their fee; a sale pays the fee out of its proceeds.
 */
export function predictionFill(
  market: OutcomeMintMarket,
  inputMint: Address,
  amount: bigint,
  scale: number,
): PredictionFill | null {
  if (inputMint !== market.settlementMint) {
    const quote = market.quote(inputMint, amount);
    if (!quote) return null;
    const fee = builderFee(scale, quote.outAmount, quote.inAmount);
    return fee < quote.outAmount ? { inAmount: quote.inAmount, outAmount: quote.outAmount - fee, fee } : null;
  }
  let budget = amount;
  for (let round = 0; round < FEE_FIT_ROUNDS && budget > 0n; round++) {
    const quote = market.quote(inputMint, budget);
    if (!quote) return null;
    const spent = quote.spent ?? quote.inAmount;
    const fee = builderFee(scale, spent, quote.outAmount);
    if (spent + fee <= amount) return { inAmount: spent + fee, outAmount: quote.outAmount, fee };
    budget = amount - fee;
  }
  return null;
}

/** The prediction market a route runs over: its one leg's market. */
function outcomeMarketOf(priced: PricedRoute): OutcomeMintMarket {
  const market = priced.route.legs[0]?.market;
  if (!(market instanceof OutcomeMintMarket)) throw new Error("an async route without a prediction market");
  return market;
}

/**
 * Refuses a buy whose receiving wallet (`destinationWallet`, else the user) is not verified when the
 * venue requires verification (reference §11); the fee payer needs none, nor do sales and
 * redemptions. A quote without `userPublicKey` is only a price, which the reference checks no wallet
 * for either.
 */
function refuseUnverified(wallets: WalletVerification | undefined, request: OrderRequest): void {
  // A buy pays a settlement mint (USDC or CASH) for outcome tokens.
  if (!wallets?.required || !SETTLEMENT_MINTS.includes(request.inputMint) || !request.userPublicKey) return;
  const receiver = request.destinationWallet ?? request.userPublicKey;
  if (!wallets.isVerified(receiver))
    throw new OrderRefused(
      "unverified_wallet_not_allowed",
      `${request.destinationWallet ? "destinationWallet" : "userPublicKey"} ${receiver} is not a verified wallet; prediction-market buys on this venue go only to verified wallets`,
    );
}

/** Refuses the parameters an async order does not honour, each with its reference code. */
function refuseUnhonoured(request: OrderRequest): void {
  const refuse = (reason: ConstructorParameters<typeof OrderRefused>[0], message: string) => {
    throw new OrderRefused(reason, message);
  };
  if (request.platformFeeBps > 0)
    refuse(
      "invalid_platform_fee_bps",
      "platformFeeBps: prediction-market orders take the builder fee as platformFeeScale, in the settlement mint",
    );
  if (request.destinationTokenAccount)
    refuse(
      "invalid_destination_token_account",
      "destinationTokenAccount: prediction-market orders deliver to the user's associated token account",
    );
  if (request.outputCloseAuthority)
    refuse(
      "invalid_output_close_authority",
      "outputCloseAuthority: prediction-market orders create the user's output account without a close authority",
    );
  if (request.outcomeAccountRentRecipient)
    refuse(
      "invalid_outcome_account_rent_recipient",
      "outcomeAccountRentRecipient: this venue does not close emptied outcome accounts (a revert may need them)",
    );
}

/**
 * `/order` for a prediction-market route: the quote's async fields and, with a user, the recorded
 * order and its open transaction. `admit` checks the user's funds and firm-quote bounds and counts
 * the order against them until its open transaction's blockhash expires (it holds no pool output).
 */
export async function orderPredictionMarket(
  deps: PredictionOrderDeps | undefined,
  request: OrderRequest,
  priced: PricedRoute,
  response: OrderResponse,
  admit: (user: Address, sponsored?: { sponsor: Address; lamports: bigint }) => Promise<AdmittedQuote>,
): Promise<AsyncOrderResponse> {
  // First, before anything is held or recorded, and before the parameters this venue does not
  // honour: a buy the reference would refuse for its wallet gets the reference's answer.
  refuseUnverified(deps?.wallets, request);
  refuseUnhonoured(request);
  const quote = await pricePredictionOrder(deps, request, priced, response);
  const user = request.userPublicKey;
  if (!user) return quote.answer;
  if (!deps) throw new OrderRefused("route_not_found", "this venue takes no prediction-market orders");
  await checkBuilderFeeAccount(deps, request, quote.market);
  const sponsor = request.sponsor;
  const admitted = await admit(
    user,
    sponsor ? { sponsor, lamports: await sponsorCost(deps, quote.rents) } : undefined,
  );
  let opened: Awaited<ReturnType<typeof issuePredictionOrder>>;
  try {
    opened = await issuePredictionOrder(
      deps,
      { ...request, userPublicKey: user },
      { ...priced, threshold: quote.threshold },
      orderTerms(request, user, quote),
    );
  } catch (error) {
    admitted.cancel();
    throw error;
  }
  admitted.attach([]);
  return { ...quote.answer, ...opened };
}

/** A prediction-market order priced: its answer before any transaction, and what issuing it needs. */
interface PredictionQuote {
  answer: AsyncOrderResponse;
  market: OutcomeMintMarket;
  threshold: bigint;
  /** The rents a buy on a market not initialized yet pays for its initialization. */
  rents: InitRents | undefined;
}

/** Fills the order against the market's book, the builder fee taken, and prices an initialization it needs. */
async function pricePredictionOrder(
  deps: PredictionOrderDeps | undefined,
  request: OrderRequest,
  priced: PricedRoute,
  response: OrderResponse,
): Promise<PredictionQuote> {
  const market = outcomeMarketOf(priced);
  const buying = request.inputMint === market.settlementMint;
  const answer: AsyncOrderResponse = {
    ...response,
    // An outcome order that cannot fill (or the part of it that cannot) returns the input, so
    // restrictRevertMint is always met.
    revertMint: request.inputMint,
    predictionMarketSlippageBps: request.predictionMarketSlippageBps ?? priced.slippageBps,
    isNativePredictionMarketOutput: buying,
    platformFee: null,
  };
  const fill = predictionFill(market, request.inputMint, request.amount, request.platformFeeScale);
  if (!fill)
    throw new OrderRefused(
      "route_not_found",
      "the market's book does not fill this amount after the builder fee",
    );
  const threshold = (fill.outAmount * (BPS - BigInt(priced.slippageBps))) / BPS;
  answer.outAmount = fill.outAmount.toString();
  answer.otherAmountThreshold = threshold.toString();
  answer.minOutAmount = threshold.toString();
  if (request.platformFeeScale > 0) {
    // Paid in the settlement mint: the input of a buy, the output of a sale.
    const notional = buying ? fill.inAmount - fill.fee : fill.outAmount + fill.fee;
    answer.platformFee = {
      amount: fill.fee.toString(),
      feeBps: notional > 0n ? Number((fill.fee * BPS) / notional) : 0,
      mode: buying ? "inputMint" : "outputMint",
    };
  }
  const initializing = buying && !market.initialized;
  if (initializing && !deps?.marketInit)
    throw new OrderRefused(
      "route_not_found",
      `the market ${market.ticker} is not initialized and this venue cannot initialize it`,
    );
  const rents = initializing ? await deps?.marketInit?.rents() : undefined;
  if (rents) {
    answer.initPredictionMarketCost = Number(rents.market);
    if (request.predictionMarketInitPayer) answer.predictionMarketInitPayerMustSign = true;
  }
  return { answer, market, threshold, rents };
}

/** The builder fee is paid in the settlement mint of the market's rail, whichever way the order goes. */
async function checkBuilderFeeAccount(
  deps: PredictionOrderDeps,
  request: OrderRequest,
  market: OutcomeMintMarket,
): Promise<void> {
  if (request.platformFeeScale === 0) return;
  if (!request.feeAccount || !deps.chain || !deps.book)
    throw new OrderRefused(
      "invalid_fee_account",
      `platformFeeScale needs feeAccount, a token account of the settlement mint ${market.settlementMint}`,
    );
  await checkNamedTokenAccount(deps.chain, deps.book, {
    name: "feeAccount",
    account: request.feeAccount,
    mint: market.settlementMint,
    refusal: "invalid_fee_account",
  });
}

/**
 * The lamports a sponsor puts up for an order: both signatures of the open transaction, the fee
 * budget, the escrow's and the output account's rent (the revert wallet's too, when named) and any
 * initialization; what settling does not use comes back to it.
 */
async function sponsorCost(deps: PredictionOrderDeps, rents: InitRents | undefined): Promise<bigint> {
  const tokenAccountRent = (await deps.marketInit?.rents())?.outcomeAccount ?? TOKEN_ACCOUNT_RENT;
  const init = rents ? rents.market + rents.outcomeAccount : 0n;
  return 2n * LAMPORTS_PER_SIGNATURE + MIN_FEE_BUDGET + 3n * tokenAccountRent + init;
}

/** The rent-exempt minimum of a token account (165 bytes), where the chain's is not at hand. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;

/** What the keeper settles the order with beyond its fill: a revert wallet, an initialization, a builder fee. */
function orderTerms(request: OrderRequest, user: Address, quote: PredictionQuote): OrderTerms {
  const { rents, market } = quote;
  return {
    ...(request.revertWallet && request.revertWallet !== user ? { revertWallet: request.revertWallet } : {}),
    ...(request.destinationWallet && request.destinationWallet !== user
      ? { receiver: request.destinationWallet }
      : {}),
    ...(request.sponsor ? { sponsor: request.sponsor } : {}),
    ...(rents
      ? { init: initTerms(market, request.predictionMarketInitPayer ?? request.sponsor ?? user, rents) }
      : {}),
    ...(request.platformFeeScale > 0 && request.feeAccount
      ? { builderFee: { scale: request.platformFeeScale, account: request.feeAccount } }
      : {}),
  };
}

/** Records an async order and returns its open transaction (unsigned), lifetime and priority fee. */
export async function issuePredictionOrder(
  deps: PredictionOrderDeps,
  request: OrderRequest & { userPublicKey: Address },
  priced: PricedRoute,
  terms: OrderTerms = {},
): Promise<
  Pick<
    OrderResponse,
    | "transaction"
    | "lastValidBlockHeight"
    | "computeUnitLimit"
    | "prioritizationFeeLamports"
    | "prioritizationType"
  >
> {
  const orderId = randomBytes(12).toString("hex");
  const escrow = deps.authorities.orderAuthority(orderId).address;
  const { latest } = priced.clock;
  const user = request.userPublicKey;
  const extra: Instruction[] = [];
  const init = terms.init;
  if (init)
    extra.push(
      initPayment(request.predictionMarketInitPayer ?? request.sponsor ?? user, escrow, BigInt(init.cost)),
    );
  const revertWallet = terms.revertWallet ? request.revertWallet : undefined;
  if (revertWallet) {
    // The revert goes to the revert wallet's account of the input mint: created now, at the user's cost.
    extra.push(
      createAssociatedTokenIdempotent({
        payer: request.sponsor ?? user,
        ata: associatedTokenAddress(revertWallet, priced.input.mint, priced.input.program),
        owner: revertWallet,
        mint: priced.input.mint,
        tokenProgram: priced.input.program,
      }),
    );
  }
  // A buyer whose outcome mint does not exist yet pays its account's rent to the escrow; the settlement creates it.
  const feeBudget = MIN_FEE_BUDGET + (init ? BigInt(init.outcomeAccountRent) : 0n);
  const message = (computeUnits: number, microLamports: bigint) =>
    openMessage({
      orderId,
      seal: deps.authorities.seal(`${orderId}\0${user}\0${latest.blockhash}`),
      user,
      escrow,
      input: priced.input,
      output: priced.output,
      amount: request.amount,
      feeBudget,
      wrapSol: false,
      blockhash: latest.blockhash,
      extra,
      createOutputAccount: !init,
      ...(terms.receiver ? { receiver: request.destinationWallet } : {}),
      ...(request.sponsor ? { sponsor: request.sponsor } : {}),
      computeUnits,
      microLamports,
    });
  const limit =
    request.dynamicComputeUnitLimit && deps.chain
      ? await simulatedComputeUnitLimit(
          deps.chain,
          signedTransaction(await message(MAX_COMPUTE_UNIT_LIMIT, 0n), []),
          ESCROW_COMPUTE_UNITS,
        )
      : ESCROW_COMPUTE_UNITS;
  const microLamports = computeUnitPriceFor(request, limit);
  const wire = signedTransaction(await message(limit, microLamports), []);
  deps.book?.addOrderEscrow(escrow);
  await insertOrder(deps.db, {
    id: orderId,
    kind: "async",
    status: "pending",
    user,
    inputMint: request.inputMint,
    outputMint: request.outputMint,
    inAmount: request.amount,
    threshold: priced.threshold,
    escrow,
    openSignature: null,
    openWire: null,
    openValidHeight: latest.lastValidBlockHeight,
    expirySlots: INTENT_EXPIRY_SLOTS,
    feeBudget,
    answer: null,
    terms,
  });
  return {
    transaction: Buffer.from(wire).toString("base64"),
    lastValidBlockHeight: Number(latest.lastValidBlockHeight),
    ...computeBudgetFields(limit, microLamports),
  };
}

export interface PredictionSettleInput extends EscrowedOrder {
  /**
   * The fill and the venue's keys delivering it; absent for a refund. `inAmount` is all the input it
   * uses (a buy's builder fee included), `outAmount` what the user receives (a sale's after the fee);
   * `settlementMint` is the rail's, which a buy pays and a sale or redemption is paid in.
   */
  fill?: {
    inAmount: bigint;
    outAmount: bigint;
    venue: VenueSigningKeys;
    settlementMint: Address;
    fee?: { amount: bigint; account: Address };
  };
  /** Receives the input the fill does not use; default the user. */
  revertWallet?: Address;
  /** Receives the output (`destinationWallet`); default the user. */
  receiver?: Address;
  /** Paid the order's lamports (the escrow's rent and the fee budget): they go back to it; default the user. */
  sponsor?: Address;
  /** A market initialization's cost the escrow authority holds, and where it goes. */
  initPayment?: { amount: bigint; to: Address };
  /** The rent of the user's outcome account, when a buy's settlement must create it. */
  outcomeAccountRent?: bigint;
  blockhash: string;
}

/** The settling transaction of a prediction-market order, paid by its escrow authority. */
export async function predictionSettleTransaction(input: PredictionSettleInput): Promise<Uint8Array> {
  const { escrow, user, fill } = input;
  const escrowSigner = createNoopSigner(escrow.address);
  const escrowAccount = associatedTokenAddress(escrow.address, input.input.mint, input.input.program);
  const revertTo = associatedTokenAddress(input.revertWallet ?? user, input.input.mint, input.input.program);
  const receiver = input.receiver ?? user;
  const userOut = associatedTokenAddress(receiver, input.output.mint, input.output.program);
  const instructions: Instruction[] = [computeUnitLimit(ESCROW_COMPUTE_UNITS)];
  const signers: Keypair[] = [escrow];
  const spent = fill?.inAmount ?? 0n;
  const fee = fill?.fee && fill.fee.amount > 0n ? fill.fee : undefined;
  let outcomeAccountRent = 0n;
  if (fill && input.input.mint === fill.settlementMint) {
    // A buy: the price goes to the treasury, the fee to the fee account; the contracts are minted to the user.
    const { venue } = fill;
    const treasuryAccount = associatedTokenAddress(
      venue.treasury.address,
      fill.settlementMint,
      input.input.program,
    );
    instructions.push(
      tokenTransfer(input.input, escrowAccount, treasuryAccount, escrow.address, spent - (fee?.amount ?? 0n)),
    );
    if (fee)
      instructions.push(tokenTransfer(input.input, escrowAccount, fee.account, escrow.address, fee.amount));
    if (input.outcomeAccountRent !== undefined) {
      outcomeAccountRent = input.outcomeAccountRent;
      instructions.push(
        createAssociatedTokenIdempotent({
          payer: escrow.address,
          ata: userOut,
          owner: receiver,
          mint: input.output.mint,
          tokenProgram: input.output.program,
        }),
      );
    }
    instructions.push(
      getMintToCheckedInstruction(
        {
          mint: input.output.mint,
          token: userOut,
          mintAuthority: createNoopSigner(venue.mintAuthority.address),
          amount: fill.outAmount,
          decimals: input.output.decimals,
        },
        { programAddress: input.output.program },
      ),
    );
    signers.push(venue.mintAuthority);
  } else if (fill) {
    // A sale or a redemption: the contracts are burnt; the treasury pays the settlement mint and the fee.
    const { venue } = fill;
    const treasuryAccount = associatedTokenAddress(
      venue.treasury.address,
      fill.settlementMint,
      input.output.program,
    );
    instructions.push(
      getBurnCheckedInstruction(
        {
          account: escrowAccount,
          mint: input.input.mint,
          authority: escrowSigner,
          amount: spent,
          decimals: input.input.decimals,
        },
        { programAddress: input.input.program },
      ),
      tokenTransfer(input.output, treasuryAccount, userOut, venue.treasury.address, fill.outAmount),
    );
    if (fee)
      instructions.push(
        tokenTransfer(input.output, treasuryAccount, fee.account, venue.treasury.address, fee.amount),
      );
    signers.push(venue.treasury);
  }
  const leftover = input.escrowAmount - spent;
  if (leftover > 0n)
    instructions.push(tokenTransfer(input.input, escrowAccount, revertTo, escrow.address, leftover));
  instructions.push(
    getCloseAccountInstruction(
      { account: escrowAccount, destination: input.sponsor ?? user, owner: escrowSigner },
      { programAddress: input.input.program },
    ),
  );
  const { initPayment: payment } = input;
  if (payment && payment.amount > 0n)
    instructions.push(
      getTransferSolInstruction({ source: escrowSigner, destination: payment.to, amount: payment.amount }),
    );
  const refund =
    input.escrowLamports -
    BigInt(signers.length) * LAMPORTS_PER_SIGNATURE -
    (payment?.amount ?? 0n) -
    outcomeAccountRent;
  if (refund > 0n)
    instructions.push(
      getTransferSolInstruction({ source: escrowSigner, destination: input.sponsor ?? user, amount: refund }),
    );
  return signedTransaction(compileMessage(escrow.address, instructions, input.blockhash), signers);
}
