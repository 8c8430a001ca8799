import { parseAddress } from "../../../chain/base58.js";
import { associatedTokenAddress } from "../../tx/token-accounts.js";
import { type PredictionSettleInput, predictionFill, predictionSettleTransaction } from "../orders.js";
import { initializePaidMarket } from "./market-initialization.js";
import type { OrderKeeperOptions } from "./options.js";
import { closePlan, type Escrowed, type Settlement } from "./settlement.js";
import { fillOnUpstream } from "./upstream-fill.js";

/**
 * A prediction-market order: against the venue at its book's price now (the builder fee taken), or
 * refunded once expired. A market the order pays to initialize is initialized first.
 */
export async function planPredictionSettlement(
  options: OrderKeeperOptions,
  escrowed: Escrowed,
): Promise<Settlement | undefined> {
  const { book, venue, chain } = options;
  const { order, input, output } = escrowed;
  const terms = order.terms ?? {};
  const feeTerms = terms.builderFee;
  let fill: PredictionSettleInput["fill"];
  let recorded: { inAmount: bigint; outAmount: bigint } | undefined;
  // An order whose fill went to the upstream follows what it filled there, expired or not.
  if (!escrowed.expired || order.upstream) {
    // One side is an outcome mint, the other its rail's settlement mint (USDC or CASH).
    await book.prediction?.prepare([input.mint, output.mint]);
    const market = book.prediction?.marketOf(input.mint) ?? book.prediction?.marketOf(output.mint);
    const scale = feeTerms?.scale ?? 0;
    const quoted = market ? predictionFill(market, input.mint, escrowed.held, scale) : null;
    // Without the venue's keys it cannot deliver: such orders are refunded at expiry.
    if (!venue || !market) return undefined;
    if (!order.upstream && (!quoted || quoted.outAmount < order.threshold)) return undefined;
    const onUpstream = options.upstream && (order.upstream || market.tradesOnBook);
    const filled = onUpstream ? await fillOnUpstream(options, escrowed, market, scale) : quoted;
    if (filled === undefined) return undefined;
    if (filled) {
      fill = {
        inAmount: filled.inAmount,
        outAmount: filled.outAmount,
        venue,
        settlementMint: market.settlementMint,
        ...(feeTerms && filled.fee > 0n
          ? { fee: { amount: filled.fee, account: parseAddress(feeTerms.account) } }
          : {}),
      };
      recorded = filled;
    }
  }
  const init = terms.init;
  const initPayment = init
    ? { amount: BigInt(init.cost), to: await initializePaidMarket(options, order.id, init) }
    : undefined;
  // A buy of a market this order initializes creates the user's outcome account, unless it exists by now.
  const receiver = terms.receiver ? parseAddress(terms.receiver) : order.user;
  const userOut = associatedTokenAddress(receiver, output.mint, output.program);
  const createOutcomeAccount = Boolean(fill && init && !(await chain.getAccountInfo(userOut)));
  // The book may have been fetched meanwhile: the blockhash as of now.
  const lifetime = book.clock.latest;
  const wire = await predictionSettleTransaction({
    escrow: escrowed.escrow,
    user: order.user,
    input,
    output,
    escrowAmount: escrowed.held,
    escrowLamports: escrowed.lamports,
    ...(fill ? { fill } : {}),
    ...(terms.revertWallet ? { revertWallet: parseAddress(terms.revertWallet) } : {}),
    ...(terms.receiver ? { receiver } : {}),
    ...(terms.sponsor ? { sponsor: parseAddress(terms.sponsor) } : {}),
    ...(initPayment ? { initPayment } : {}),
    ...(init && createOutcomeAccount ? { outcomeAccountRent: BigInt(init.outcomeAccountRent) } : {}),
    blockhash: lifetime.blockhash,
  });
  return { wire, lifetime, plan: closePlan(escrowed, recorded), holds: [] };
}
