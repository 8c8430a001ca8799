/** Solana's transaction fee: 5,000 lamports per signature plus the compute-budget priority fee. */
import { decodeAddressBytes } from "./base58.js";
import { COMPUTE_BUDGET_PROGRAM, LAMPORTS_PER_SIGNATURE } from "./programs.js";
import type { WireTransaction } from "./wire.js";

const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_UNITS = 1_400_000n;
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const COMPUTE_BUDGET_KEY = Buffer.from(decodeAddressBytes(COMPUTE_BUDGET_PROGRAM));

/** The fee a transaction pays, whether it succeeds or fails. */
export function transactionFee(tx: Pick<WireTransaction, "header" | "accountKeys" | "instructions">): bigint {
  const { unitLimit, unitPrice, otherInstructions } = computeBudgetOf(tx);
  const limit = unitLimit ?? otherInstructions * DEFAULT_UNITS_PER_INSTRUCTION;
  const units = limit > MAX_UNITS ? MAX_UNITS : limit;
  const priority = (unitPrice * units + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return BigInt(tx.header.numRequiredSignatures) * LAMPORTS_PER_SIGNATURE + priority;
}

/** The price per compute unit a transaction's SetComputeUnitPrice names, in micro-lamports; 0 without one. */
export function computeUnitPriceOf(tx: Pick<WireTransaction, "accountKeys" | "instructions">): bigint {
  return computeBudgetOf(tx).unitPrice;
}

/** What a transaction's compute-budget instructions set, and how many other instructions it has. */
function computeBudgetOf(tx: Pick<WireTransaction, "accountKeys" | "instructions">): {
  unitLimit: bigint | undefined;
  unitPrice: bigint;
  otherInstructions: bigint;
} {
  let unitLimit: bigint | undefined;
  let unitPrice = 0n;
  let otherInstructions = 0n;
  for (const instruction of tx.instructions) {
    const program = tx.accountKeys[instruction.programIdIndex];
    if (!program || !COMPUTE_BUDGET_KEY.equals(program)) {
      otherInstructions++;
      continue;
    }
    const data = instruction.data;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === SET_COMPUTE_UNIT_LIMIT && data.length >= 5) unitLimit = BigInt(view.getUint32(1, true));
    if (data[0] === SET_COMPUTE_UNIT_PRICE && data.length >= 9) unitPrice = view.getBigUint64(1, true);
  }
  return { unitLimit, unitPrice, otherInstructions };
}
