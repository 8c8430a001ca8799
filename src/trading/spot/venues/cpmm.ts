/**
 * Constant-product pool math (x · y = k with a fee on the input), in exact integers. Every result is
 * rounded down, so rounding favours the pool by less than one unit of the output token.
 */

export const BPS = 10_000n;

/** Largest fee a pool may charge, in basis points (10%). */
export const MAX_POOL_FEE_BPS = 1_000;

/**
 * What a pool with reserves (`reserveIn`, `reserveOut`) pays for `amountIn`, after its fee:
 * floor(reserveOut · a / (reserveIn + a)) with a = amountIn · (1 − fee). Always below `reserveOut`.
 */
export function cpmmAmountOut(
  reserveIn: bigint,
  reserveOut: bigint,
  amountIn: bigint,
  feeBps: number,
): bigint {
  if (amountIn <= 0n || reserveIn <= 0n || reserveOut <= 0n) return 0n;
  const inAfterFee = amountIn * (BPS - BigInt(feeBps));
  return (reserveOut * inAfterFee) / (reserveIn * BPS + inAfterFee);
}

/** The output at the pool's marginal price (no price impact), after its fee, as a float for reporting. */
export function cpmmSpotOut(reserveIn: bigint, reserveOut: bigint, amountIn: bigint, feeBps: number): number {
  if (reserveIn <= 0n) return 0;
  return (Number(amountIn) * Number(reserveOut) * (1 - feeBps / 10_000)) / Number(reserveIn);
}
