/** Markets that orders pay to initialize: initializing them, and settling a paid initialization. */
import type { Address } from "@solana/kit";
import { parseAddress } from "../../../chain/base58.js";
import { marketAccounts } from "../../../markets/accounts.js";
import { claimMarketInitialization, markMarketTokenized } from "../../../markets/store.js";
import { initSettleTransaction } from "../market-init.js";
import type { OrderRecord, OrderTerms } from "../order-store.js";
import type { OrderKeeperOptions } from "./options.js";
import type { Settlement } from "./settlement.js";

/**
 * Initializes the market an order or request paid for, when this venue can (idempotently: the
 * accounts, the claim and the catalogue mark each survive a repeat); returns where the payment goes:
 * the treasury when this payment initialized it, else back to its payer (someone else's did first,
 * the catalogue had it already, or this venue cannot initialize markets).
 */
export async function initializePaidMarket(
  options: OrderKeeperOptions,
  claimant: string,
  init: NonNullable<OrderTerms["init"]>,
): Promise<Address> {
  const { venue, initMarket, db } = options;
  const payer = parseAddress(init.payer);
  if (!venue || !initMarket) return payer;
  // The terms name the USDC rail; every rail is created at once.
  await initMarket(marketAccounts(init));
  // Claimed before it is marked: a market already marked tokenized is no one's to claim.
  const claimed = await claimMarketInitialization(db, init.ticker, claimant);
  await markMarketTokenized(db, init.ticker);
  return claimed ? venue.treasury.address : payer;
}

/** A market initialization whose payment arrived: the market is initialized and the payment settled. */
export async function planInitSettlement(
  options: OrderKeeperOptions,
  order: OrderRecord,
): Promise<Settlement | undefined> {
  const { chain, authorities, book } = options;
  const init = order.terms?.init;
  const escrow = authorities.orderAuthority(order.id);
  const lamports = await chain.getBalance(escrow.address);
  // Settled already (a stale copy), or never complete: nothing to move.
  if (!init || lamports < order.inAmount + order.feeBudget) return undefined;
  const paidTo = await initializePaidMarket(options, order.id, init);
  const lifetime = book.clock.latest;
  const wire = initSettleTransaction({
    escrow,
    payer: parseAddress(init.payer),
    cost: order.inAmount,
    lamports,
    paidTo,
    blockhash: lifetime.blockhash,
  });
  const refunded = paidTo !== options.venue?.treasury.address;
  return {
    wire,
    lifetime,
    plan: {
      fill: null,
      revert: refunded ? { mint: order.inputMint, amount: order.inAmount.toString() } : null,
    },
    holds: [],
  };
}
