import type { Address } from "@solana/kit";
import { parseAddress } from "../../../chain/base58.js";
import type { VenueMarket } from "../../spot/market.js";
import type { SyncRoute } from "../../spot/router.js";
import type { TradingBook } from "../../spot/trading-book.js";
import { BPS } from "../../spot/venues/cpmm.js";
import { CPMM_VENUE } from "../../spot/venues/cpmm-pool.js";
import { checkVenueSignatures } from "../../tx/signing-guard.js";
import { settleTransaction } from "../escrow.js";
import { closePlan, type Escrowed, type Settlement } from "./settlement.js";

/** A spot order: through the best pool route, if it pays the threshold (else it waits), or refunded once expired. */
export async function planSpotSettlement(
  book: TradingBook,
  escrowed: Escrowed,
): Promise<Settlement | undefined> {
  const { order, input, output, escrow } = escrowed;
  const lifetime = escrowed.clock.latest;
  let route: SyncRoute<VenueMarket> | undefined;
  let fee: { amount: bigint; account: Address } | undefined;
  if (!escrowed.expired) {
    const best = book.graph.bestRoute({
      inputMint: input.mint,
      outputMint: output.mint,
      amount: order.inAmount,
      maxLegs: 2,
      venues: new Set([CPMM_VENUE]),
    });
    if (best?.executionMode !== "sync") return undefined;
    // An intent's platform fee comes out of the output; the user's share must meet the threshold.
    const terms = order.terms?.platformFee;
    fee = terms && {
      amount: (best.outAmount * BigInt(terms.bps)) / BPS,
      account: parseAddress(terms.account),
    };
    if (best.outAmount - (fee?.amount ?? 0n) < order.threshold) return undefined;
    route = best;
  }
  const userOut = route ? route.outAmount - (fee?.amount ?? 0n) : 0n;
  const legs = route?.legs ?? [];
  // Held as soon as priced, before the awaits of building: a settlement priced meanwhile prices on
  // what this one takes, so no two are ever paid from the same reserves at one price.
  const holds = legs.map((leg) =>
    leg.market.reserve(leg.outputMint, leg.outAmount, lifetime.lastValidBlockHeight, leg.inAmount),
  );
  let wire: Uint8Array;
  try {
    wire = await settleTransaction({
      escrow,
      user: order.user,
      input,
      output,
      escrowAmount: escrowed.held,
      escrowLamports: escrowed.lamports,
      ...(route ? { fill: { legs: route.legs, userOut, ...(fee ? { fee } : {}) } } : {}),
      blockhash: lifetime.blockhash,
    });
    // The escrow is the venue's own key here, so the settlement is checked like any transaction it signs.
    checkVenueSignatures(
      wire,
      {
        payer: escrow.address,
        payerSignedByVenue: true,
        legs: legs.map((leg) => ({
          pool: leg.market,
          inputMint: leg.inputMint,
          inAmount: leg.inAmount,
          outputMint: leg.outputMint,
          maxOut: leg.outAmount,
        })),
      },
      book,
    );
  } catch (error) {
    for (const hold of holds) hold.release();
    throw error;
  }
  const fill = route && { inAmount: route.inAmount, outAmount: userOut };
  return { wire, lifetime, plan: closePlan(escrowed, fill), holds };
}
