/**
 * The checks step of an order for a user, against the chain and the firm-quote bounds, before
 * anything is built: where a spot order's output may go, whether its sponsor can pay, what the user
 * can pay; and, for a prediction-market order, its admission under the bounds.
 */
import type { Address } from "@solana/kit";
import type { Chain } from "../../chain/chain.js";
import { LAMPORTS_PER_SIGNATURE, WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { OrderRefused } from "../errors.js";
import { type AdmittedQuote, FirmQuoteRefused, type ReservationStore } from "../quotes/firm-quotes.js";
import { familyKeyOf, pairKeyOf } from "../quotes/quote-family.js";
import type { OrderDestination } from "../tx/order-transaction.js";
import { associatedTokenAddress, checkNamedTokenAccount } from "../tx/token-accounts.js";
import type { VenueMarket } from "./market.js";
import type { OrderRequest, PricedRoute } from "./order-terms.js";
import type { TokenRecord } from "./pools/store.js";
import type { SyncRoute } from "./router.js";
import type { TradingBook } from "./trading-book.js";

/** What a spot order's checks found: where its output goes, and what the user holds of its input. */
export interface CheckedSpotOrder {
  destination: OrderDestination | undefined;
  balance: bigint;
}

export class OrderChecks {
  constructor(
    private readonly book: TradingBook,
    private readonly chain: Chain,
    private readonly firmQuotes: ReservationStore,
  ) {}

  /** A spot order's destination and sponsor, checked in that order, and the user's balance of its input. */
  async spotOrder(
    request: OrderRequest & { userPublicKey: Address },
    priced: PricedRoute,
    route: SyncRoute<VenueMarket>,
  ): Promise<CheckedSpotOrder> {
    const destination = await this.destinationOf(request, priced.output);
    if (request.sponsor) await this.checkSponsor(request.sponsor, route);
    const balance = await this.balanceOf(request.userPublicKey, priced.input, request.wrapAndUnwrapSol);
    return { destination, balance };
  }

  /**
   * Admits a prediction-market order for `wallet` under the firm-quote bounds. Each order is a stored
   * row the keeper watches, so it counts against the bounds until its blockhash expires; its input is
   * not held for it, as it holds no pool output (and once it opens, the input has left the wallet anyway).
   */
  async admitAsyncOrder(
    wallet: Address,
    client: string,
    request: OrderRequest,
    priced: PricedRoute,
    sponsored?: { sponsor: Address; lamports: bigint },
  ): Promise<AdmittedQuote> {
    const { input, clock } = priced;
    const balance = await this.balanceOf(wallet, input, false);
    const terms = { wallet, client, inputMint: input.mint, inAmount: request.amount, balance };
    // A re-quote of the same market replaces the client's last one in the count (it holds nothing).
    const pair = pairKeyOf(client, wallet, request.inputMint, request.outputMint);
    const family = familyKeyOf(pair, []);
    await this.firmQuotes.check(terms, clock.blockHeight, family);
    // A sponsor's lamports back the family once too: a re-quote sponsored by it replaces the last.
    const sponsor =
      sponsored &&
      (await this.admitSponsor(
        sponsored.sponsor,
        client,
        sponsored.lamports,
        priced,
        familyKeyOf(pair, [sponsored.sponsor]),
      ));
    try {
      const admitted = await this.firmQuotes.reserve(
        { ...terms, inAmount: 0n },
        clock.blockHeight,
        clock.latest.lastValidBlockHeight,
        [],
        undefined,
        { key: family },
      );
      if (!sponsor) return admitted;
      return {
        attach: (holds) => {
          admitted.attach(holds);
          sponsor.attach([]);
        },
        cancel: () => {
          admitted.cancel();
          sponsor.cancel();
        },
      };
    } catch (error) {
      sponsor?.cancel();
      throw error;
    }
  }

  /**
   * Holds `lamports` of a sponsor's SOL for an order it pays (its fees, rents and any initialization)
   * until the order's blockhash expires: like a wallet's input, a sponsor's lamports back one order at
   * a time (one family's re-quotes once), whichever client or instance names it. Refused as `invalid_sponsor`.
   */
  private async admitSponsor(
    sponsor: Address,
    client: string,
    lamports: bigint,
    { clock }: PricedRoute,
    family: string,
  ): Promise<AdmittedQuote> {
    const balance = await this.chain.getBalance(sponsor);
    const terms = { wallet: sponsor, client, inputMint: WRAPPED_SOL_MINT, inAmount: lamports, balance };
    try {
      return await this.firmQuotes.reserve(
        terms,
        clock.blockHeight,
        clock.latest.lastValidBlockHeight,
        [],
        undefined,
        { key: family },
      );
    } catch (error) {
      if (!(error instanceof FirmQuoteRefused)) throw error;
      throw new OrderRefused(
        "invalid_sponsor",
        `sponsor ${sponsor} cannot pay this order: ${lamports} lamports needed (fees, rents, any initialization); ${error.message}`,
      );
    }
  }

  /**
   * Where the output goes: `destinationTokenAccount` (an existing account of the output mint that no
   * venue key owns; for native SOL output the wallet the SOL is sent to), `destinationWallet`, or the user.
   */
  private async destinationOf(
    request: OrderRequest,
    output: TokenRecord,
  ): Promise<OrderDestination | undefined> {
    if (request.destinationWallet) return { wallet: request.destinationWallet };
    const account = request.destinationTokenAccount;
    if (!account) return undefined;
    if (request.wrapAndUnwrapSol && output.mint === WRAPPED_SOL_MINT) return { wallet: account };
    await checkNamedTokenAccount(this.chain, this.book, {
      name: "destinationTokenAccount",
      account,
      mint: output.mint,
      refusal: "invalid_destination_token_account",
    });
    return { tokenAccount: account };
  }

  /** Refuses a sponsor that cannot pay the transaction's signatures: its transaction could never land. */
  private async checkSponsor(sponsor: Address, route: SyncRoute<VenueMarket>): Promise<void> {
    const signatures = 2n + BigInt(new Set(route.legs.map((leg) => leg.market)).size);
    const lamports = await this.chain.getBalance(sponsor);
    if (lamports < signatures * LAMPORTS_PER_SIGNATURE)
      throw new OrderRefused(
        "invalid_sponsor",
        `sponsor ${sponsor} holds ${lamports} lamports, less than the ${signatures * LAMPORTS_PER_SIGNATURE} its transaction's fee needs`,
      );
  }

  /** What `user` can pay of `token` now: its token account, or its lamports when native SOL is wrapped for it. */
  private async balanceOf(user: Address, token: TokenRecord, wrapSol: boolean): Promise<bigint> {
    if (wrapSol && token.mint === WRAPPED_SOL_MINT) return this.chain.getBalance(user);
    const amount = await this.chain.getTokenAccountBalance(
      associatedTokenAddress(user, token.mint, token.program),
    );
    return amount ?? 0n;
  }
}
