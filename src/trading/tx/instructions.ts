/**
 * The instructions an order transaction repeats, built with the programs' own data encoders made once
 * here: kit's instruction builders construct their encoders anew on every call, which was a quarter
 * of the cost of a firm quote's transaction. The account lists follow the programs' interfaces, as the
 * builders in `@solana-program/token` and `/compute-budget` lay them out.
 */
import { AccountRole, type Address, type Instruction } from "@solana/kit";
import {
  getSetComputeUnitLimitInstructionDataEncoder,
  getSetComputeUnitPriceInstructionDataEncoder,
} from "@solana-program/compute-budget";
import {
  getCreateAssociatedTokenIdempotentInstructionDataEncoder,
  getTransferCheckedInstructionDataEncoder,
} from "@solana-program/token";
import { ASSOCIATED_TOKEN_PROGRAM, COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM } from "../../chain/programs.js";
import type { TokenRecord } from "../spot/pools/store.js";

const transferCheckedData = getTransferCheckedInstructionDataEncoder();
const createIdempotentData = getCreateAssociatedTokenIdempotentInstructionDataEncoder().encode({});
const unitLimitData = getSetComputeUnitLimitInstructionDataEncoder();
const unitPriceData = getSetComputeUnitPriceInstructionDataEncoder();

/** SPL Token / Token-2022 `TransferChecked`: `amount` of `mint` from `source` to `destination`. */
export function transferChecked(
  program: Address,
  accounts: { source: Address; mint: Address; destination: Address; authority: Address },
  amount: bigint,
  decimals: number,
): Instruction {
  return {
    programAddress: program,
    accounts: [
      { address: accounts.source, role: AccountRole.WRITABLE },
      { address: accounts.mint, role: AccountRole.READONLY },
      { address: accounts.destination, role: AccountRole.WRITABLE },
      { address: accounts.authority, role: AccountRole.READONLY_SIGNER },
    ],
    data: transferCheckedData.encode({ amount, decimals }),
  };
}

/** `TransferChecked` of a listed token, by the program that owns it. */
export function tokenTransfer(
  token: TokenRecord,
  source: Address,
  destination: Address,
  authority: Address,
  amount: bigint,
): Instruction {
  return transferChecked(
    token.program,
    { source, mint: token.mint, destination, authority },
    amount,
    token.decimals,
  );
}

/** Associated Token Account `CreateIdempotent`: creates `ata` for `owner` and `mint` unless it exists. */
export function createAssociatedTokenIdempotent(accounts: {
  payer: Address;
  ata: Address;
  owner: Address;
  mint: Address;
  tokenProgram: Address;
}): Instruction {
  return {
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    accounts: [
      { address: accounts.payer, role: AccountRole.WRITABLE_SIGNER },
      { address: accounts.ata, role: AccountRole.WRITABLE },
      { address: accounts.owner, role: AccountRole.READONLY },
      { address: accounts.mint, role: AccountRole.READONLY },
      { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
      { address: accounts.tokenProgram, role: AccountRole.READONLY },
    ],
    data: createIdempotentData,
  };
}

/** Compute Budget `SetComputeUnitLimit`. */
export function computeUnitLimit(units: number): Instruction {
  return { programAddress: COMPUTE_BUDGET_PROGRAM, data: unitLimitData.encode({ units }) };
}

/** Compute Budget `SetComputeUnitPrice`, in micro-lamports per unit. */
export function computeUnitPrice(microLamports: bigint): Instruction {
  return { programAddress: COMPUTE_BUDGET_PROGRAM, data: unitPriceData.encode({ microLamports }) };
}
