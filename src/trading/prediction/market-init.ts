/**
 * Initializing a prediction market: creating the ledger and the two Token-2022 outcome mints of each
 * of its rails (USDC and CASH, together) on the chain. No program on this chain can create them from a
 * user's transaction (their addresses are derived, with no private keys), so the venue creates them
 * itself, and the payer pays their exact rent into a per-request escrow authority the venue controls.
 * The keeper notices the funded escrow, creates the accounts (idempotently, as genesis does), marks
 * the market tokenized in storage, and moves the payment to the treasury; a payment it cannot use (the
 * market was initialized by someone else first, or this venue holds no mint authority) goes back to
 * the payer. Orders on a market not yet initialized carry the same payment in their open transaction
 * (see orders.ts).
 */
import { randomBytes } from "node:crypto";
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import type { Kysely } from "kysely";
import { isAddressText } from "../../chain/base58.js";
import type { Chain } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import { MARKET_LEDGER_SIZE } from "../../chain/market-ledger.js";
import { LAMPORTS_PER_SIGNATURE, WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { MINT_SIZE } from "../../chain/token-layout.js";
import { SETTLEMENT_MINTS } from "../../markets/accounts.js";
import type { Tables } from "../../storage/database.js";
import { TradingNotReady } from "../errors.js";
import type { ReservationStore } from "../quotes/firm-quotes.js";
import type { PoolAuthorities } from "../spot/pools/authority.js";
import type { ChainClock, TradingBook } from "../spot/trading-book.js";
import type { OutcomeMintMarket } from "../spot/venues/prediction.js";
import { computeUnitLimit } from "../tx/instructions.js";
import { compileMessage, signedTransaction } from "../tx/transaction.js";
import { INTENT_EXPIRY_SLOTS, openMemo } from "./escrow.js";
import { insertOrder, type OrderTerms } from "./order-store.js";

/** A Token-2022 associated account with the ImmutableOwner extension: what an outcome account takes. */
export const OUTCOME_ACCOUNT_SIZE = 170;
/** Compute units of the initialization transaction: two transfers and a memo. */
export const INIT_COMPUTE_UNITS = 20_000;

/** Why `GET /prediction-market-init` answers no; each reason is the reference's code. */
export type MarketInitRefusal =
  | "invalid_payer"
  | "invalid_outcome_mint"
  | "unknown_outcome_mint"
  | "prediction_market_already_initialized"
  | "not_ready";

/** A market initialization the venue will not issue. */
export class MarketInitRefused extends Error {
  override name = "MarketInitRefused";
  constructor(
    readonly reason: MarketInitRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** What a market's initialization costs in lamports, read from the chain's rent. */
export interface InitRents {
  /** The rent of every rail's ledger and two mints: the market's initialization cost. */
  market: bigint;
  /** The rent of one outcome account, paid by a buyer whose outcome account the settlement creates. */
  outcomeAccount: bigint;
}

/**
 * The initialization of a market as an order or a request records it (OrderTerms.init): its USDC
 * rail's accounts whichever rail is traded, since every other rail is derived from them.
 */
export function initTerms(
  market: OutcomeMintMarket,
  payer: Address,
  rents: InitRents,
): NonNullable<OrderTerms["init"]> {
  return {
    ticker: market.ticker,
    marketLedger: market.usdcRail.marketLedger,
    yesMint: market.usdcRail.yesMint,
    noMint: market.usdcRail.noMint,
    payer,
    cost: rents.market.toString(),
    outcomeAccountRent: rents.outcomeAccount.toString(),
  };
}

/** The payer's transfer of a market's initialization cost to the escrow authority that holds it. */
export function initPayment(payer: Address, escrow: Address, cost: bigint): Instruction {
  return getTransferSolInstruction({ source: createNoopSigner(payer), destination: escrow, amount: cost });
}

/** Issues market initializations and knows what they cost. */
export class MarketInitDesk {
  private rentsRead: Promise<InitRents> | undefined;

  constructor(
    private readonly deps: {
      db: Kysely<Tables>;
      chain: Chain;
      book: TradingBook;
      authorities: PoolAuthorities;
      /** Each request stores an order the keeper watches: counted against the client's firm-quote bounds. */
      firmQuotes?: ReservationStore;
    },
  ) {}

  /** The rents of a market's accounts and of an outcome account (read once: rent does not change). */
  rents(): Promise<InitRents> {
    this.rentsRead ??= (async () => {
      const { chain } = this.deps;
      const [mint, ledger, account] = await Promise.all([
        chain.getMinimumBalanceForRentExemption(MINT_SIZE),
        chain.getMinimumBalanceForRentExemption(MARKET_LEDGER_SIZE),
        chain.getMinimumBalanceForRentExemption(OUTCOME_ACCOUNT_SIZE),
      ]);
      const rails = BigInt(SETTLEMENT_MINTS.length);
      return { market: rails * (2n * mint + ledger), outcomeAccount: account };
    })().catch((error: unknown) => {
      this.rentsRead = undefined;
      throw error;
    });
    return this.rentsRead;
  }

  /**
   * The transaction initializing the market of `outcomeMint`, paid and signed by `payer`: it moves the
   * exact cost (and the settling fee) to a new escrow authority, recorded for the keeper.
   */
  async initTransaction(
    payerText: string,
    outcomeMintText: string,
    client = "local",
  ): Promise<{ transaction: string; lastValidBlockHeight: number; computeUnitLimit: number }> {
    const { book, db, authorities } = this.deps;
    // Checked before anything reads them; the length is bounded before base58 decoding.
    if (!isAddressText(payerText))
      throw new MarketInitRefused("invalid_payer", "payer must be a base58 public key");
    if (!isAddressText(outcomeMintText))
      throw new MarketInitRefused("invalid_outcome_mint", "outcomeMint must be a base58 mint address");
    const payer: Address = payerText;
    const outcomeMint: Address = outcomeMintText;
    if (book.isVenueAccount(payer))
      throw new MarketInitRefused("invalid_payer", `payer ${payer} is one of the venue's own accounts`);
    if (!book.loaded || !book.prediction)
      throw new MarketInitRefused("not_ready", "the venue's markets are still loading; retry shortly");
    const market = book.prediction.marketOf(outcomeMint);
    if (!market)
      throw new MarketInitRefused(
        "unknown_outcome_mint",
        `${outcomeMint} is not the yes or no mint of an active or redeemable market of this venue`,
      );
    if (market.initialized)
      throw new MarketInitRefused(
        "prediction_market_already_initialized",
        `the market ${market.ticker} of ${outcomeMint} is already initialized`,
      );
    let clock: ChainClock;
    try {
      clock = book.clock;
    } catch (error) {
      // The clock not read yet, or the chain's state not current (TradingNotReady says which).
      throw new MarketInitRefused(
        "not_ready",
        error instanceof TradingNotReady ? error.message : "the chain's latest blockhash is not known yet",
      );
    }
    const rents = await this.rents();
    // The cost, the keeper's settling fee and the payer's own signature: a payer who could never pay
    // is refused before anything is recorded.
    const payment = rents.market + LAMPORTS_PER_SIGNATURE;
    const lamports = await this.deps.chain.getBalance(payer);
    if (lamports < payment + LAMPORTS_PER_SIGNATURE)
      throw new MarketInitRefused(
        "invalid_payer",
        `payer ${payer} holds ${lamports} lamports, less than the ${payment + LAMPORTS_PER_SIGNATURE} the initialization costs`,
      );
    const id = randomBytes(12).toString("hex");
    const escrow = authorities.orderAuthority(id).address;
    const { latest } = clock;
    const message = compileMessage(
      payer,
      [
        computeUnitLimit(INIT_COMPUTE_UNITS),
        // The cost, and the fee of the keeper's one-signature settling transaction.
        initPayment(payer, escrow, payment),
        openMemo(id, authorities.seal(`${id}\0${payer}\0${latest.blockhash}`)),
      ],
      latest.blockhash,
    );
    // Bounded like a firm quote (it holds nothing, and its payment is checked above) until its blockhash expires.
    (
      await this.deps.firmQuotes?.reserve(
        { wallet: payer, client, inputMint: WRAPPED_SOL_MINT, inAmount: 0n, balance: lamports },
        clock.blockHeight,
        latest.lastValidBlockHeight,
      )
    )?.attach([]);
    book.addOrderEscrow(escrow);
    await insertOrder(db, {
      id,
      kind: "init",
      status: "pending",
      user: payer,
      // The payment is native lamports; the "output" is the market's mint asked for.
      inputMint: WRAPPED_SOL_MINT,
      outputMint: outcomeMint,
      inAmount: rents.market,
      threshold: 0n,
      escrow,
      openSignature: null,
      openWire: null,
      openValidHeight: latest.lastValidBlockHeight,
      expirySlots: INTENT_EXPIRY_SLOTS,
      feeBudget: LAMPORTS_PER_SIGNATURE,
      answer: null,
      terms: { init: initTerms(market, payer, rents) },
    });
    return {
      transaction: Buffer.from(signedTransaction(message, [])).toString("base64"),
      lastValidBlockHeight: Number(latest.lastValidBlockHeight),
      computeUnitLimit: INIT_COMPUTE_UNITS,
    };
  }
}

/**
 * The settling transaction of a market initialization, paid by its escrow authority: the cost goes to
 * `paidTo` (the treasury when this request's payment initialized the market, else back to the payer),
 * and anything else the authority holds back to the payer.
 */
export function initSettleTransaction(input: {
  escrow: Keypair;
  payer: Address;
  cost: bigint;
  lamports: bigint;
  paidTo: Address;
  blockhash: string;
}): Uint8Array {
  const source = createNoopSigner(input.escrow.address);
  const rest = input.lamports - input.cost - LAMPORTS_PER_SIGNATURE;
  const instructions: Instruction[] = [
    computeUnitLimit(INIT_COMPUTE_UNITS),
    getTransferSolInstruction({ source, destination: input.paidTo, amount: input.cost }),
  ];
  if (rest > 0n)
    instructions.push(getTransferSolInstruction({ source, destination: input.payer, amount: rest }));
  return signedTransaction(compileMessage(input.escrow.address, instructions, input.blockhash), [
    input.escrow,
  ]);
}
