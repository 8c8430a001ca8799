/**
 * The one check every transaction the venue signs passes before it is signed or leaves the process:
 * a firm quote's compiled message (`checkMessageBeforeSigning`), a settlement's wire bytes
 * (`checkVenueSignatures`); both read the same plan (`checkSigningPlan`). It allows the venue's pool
 * signatures only on token transfers out of that pool's own vaults, each pool paying at most what the
 * quote says and only against an inflow of at least the quoted input that some other party (the user,
 * the order's escrow, or the previous pool of the route) pays. The party the swap is for must not be a
 * venue account; unless the venue settles an escrow it holds, the transaction must still lack that
 * party's signature, so nothing the venue issues is complete as issued. A pool authority may also open
 * its quote family's ticket, once, exactly as `openTicketInstruction` does (its rent, no data).
 */
import type { Address, Instruction, ReadonlyUint8Array } from "@solana/kit";
import { addressOf } from "../../chain/base58.js";
import { isTokenProgram, SYSTEM_PROGRAM } from "../../chain/programs.js";
import { parseWireTransaction } from "../../chain/wire.js";
import { openTicketInstruction, type QuoteTicket } from "../quotes/quote-ticket.js";
import type { SyncMarket } from "../spot/market.js";
import type { CompiledMessage } from "./transaction.js";

/** What the guard needs to know of the venue's accounts (the trading book answers it). */
export interface VenueAccounts {
  isVenueAccount(address: string): boolean;
}

/** One leg of the swap the venue agreed to. */
export interface GuardedLeg {
  pool: SyncMarket;
  inputMint: Address;
  inAmount: bigint;
  outputMint: Address;
  /** The most the pool may pay out of its output vault (to the user, the next pool and the fee account together). */
  maxOut: bigint;
}

export interface GuardedSwap {
  /** The party the swap is for: the only funder of the first leg, and the fee payer unless `feePayer` is named. */
  payer: Address;
  /** Who pays the fee when it is not the party (a sponsor); it must not be a venue account either. */
  feePayer?: Address;
  /** True when the venue itself signs as the payer (an order escrow it settles); else the payer must still sign. */
  payerSignedByVenue: boolean;
  legs: readonly GuardedLeg[];
  /** The quote family's ticket the transaction may open, based on and paid by one of its pools. */
  ticket?: QuoteTicket;
}

/** A transaction the venue must not sign: the reason names what was wrong. */
export class UnsafeTransactionError extends Error {
  override name = "UnsafeTransactionError";
}

// SPL Token and Token-2022 instruction tags.
const TRANSFER = 3;
const TRANSFER_CHECKED = 12;

/**
 * A transaction as the guard reads it: its account keys (signers first, the fee payer first of all),
 * which signatures are filled, and its instructions by account address.
 */
export interface SigningPlan {
  keys: readonly string[];
  /** Whether each signer's (the first `signed.length` keys') signature is present. */
  signed: readonly boolean[];
  instructions: readonly { program: string; accounts: readonly string[]; data: ReadonlyUint8Array }[];
}

/** Throws `UnsafeTransactionError` unless the wire transaction moves venue funds only as `swap` allows. */
export function checkVenueSignatures(wire: Uint8Array, swap: GuardedSwap, venue: VenueAccounts): void {
  const tx = parseWireTransaction(wire);
  if (tx.lookups.length > 0) refuse("it loads accounts from address lookup tables");
  const keys = tx.accountKeys.map(addressOf);
  checkSigningPlan(
    {
      keys,
      signed: Array.from({ length: tx.header.numRequiredSignatures }, (_, i) =>
        Boolean(tx.signatures[i]?.some((byte) => byte !== 0)),
      ),
      instructions: tx.instructions.map((instruction) => ({
        program: keys[instruction.programIdIndex] as string,
        accounts: Array.from(instruction.accounts, (index) => keys[index] as string),
        data: instruction.data,
      })),
    },
    swap,
    venue,
  );
}

/**
 * The same check on a compiled message about to be signed (`compileMessage` lays out exactly these
 * keys and instructions, and no lookup tables): the hot path, which need not parse its own bytes.
 */
export function checkMessageBeforeSigning(
  message: CompiledMessage,
  instructions: readonly Instruction[],
  venueSigners: readonly string[],
  swap: GuardedSwap,
  venue: VenueAccounts,
): void {
  const signing = new Set(venueSigners);
  checkSigningPlan(
    {
      keys: message.signers,
      signed: message.signers.map((signer) => signing.has(signer)),
      instructions: instructions.map((instruction) => ({
        program: instruction.programAddress,
        accounts: instruction.accounts?.map((account) => account.address) ?? [],
        data: instruction.data ?? EMPTY,
      })),
    },
    swap,
    venue,
  );
}

const EMPTY = new Uint8Array();

/** Throws `UnsafeTransactionError` unless `plan` moves venue funds only as `swap` allows. */
function checkSigningPlan(plan: SigningPlan, swap: GuardedSwap, venue: VenueAccounts): void {
  const { keys } = plan;
  const feePayer = swap.feePayer ?? swap.payer;
  if (keys[0] !== feePayer) refuse(`its fee payer ${keys[0]} is not the order's ${feePayer}`);
  // The venue is the party only as the escrow of an order it settles, which is its own account.
  if (!swap.payerSignedByVenue && venue.isVenueAccount(swap.payer))
    refuse(`its party ${swap.payer} is one of the venue's accounts`);
  if (feePayer !== swap.payer && venue.isVenueAccount(feePayer))
    refuse(`its fee payer ${feePayer} is one of the venue's accounts`);

  // The keys the venue signed for: the pools of the route, and the payer when it is the venue's escrow.
  const pools = new Map<string, SyncMarket>(swap.legs.map((leg) => [leg.pool.authority.address, leg.pool]));
  let unsigned = 0;
  for (const [i, signed] of plan.signed.entries()) {
    const signer = keys[i] as string;
    const venueSigns = pools.has(signer) || (swap.payerSignedByVenue && signer === swap.payer);
    if (signed !== venueSigns) refuse(`the signature of ${signer} is ${signed ? "present" : "missing"}`);
    if (!signed) {
      unsigned += 1;
      if (venue.isVenueAccount(signer)) refuse(`it leaves the venue's account ${signer} to sign`);
    }
  }
  if (!swap.payerSignedByVenue && unsigned === 0) refuse("it would be complete without the user");

  const vaults = new Map<string, { pool: SyncMarket; paid: bigint; received: bigint }>();
  for (const pool of pools.values()) {
    for (const vault of pool.vaults) vaults.set(vault, { pool, paid: 0n, received: 0n });
  }
  const ticket = swap.ticket && pools.has(swap.ticket.base) ? openTicketInstruction(swap.ticket) : undefined;
  let ticketsOpened = 0;
  for (const { program, accounts, data } of plan.instructions) {
    const poolSigners = accounts.filter((account) => pools.has(account));
    const transfer = isTokenProgram(program) ? tokenTransferOf(data, accounts) : undefined;
    if (!transfer) {
      if (ticket && program === SYSTEM_PROGRAM && sameInstruction(ticket, accounts, data)) {
        ticketsOpened += 1;
        if (ticketsOpened > 1) refuse("it opens its quote ticket twice");
        continue;
      }
      if (poolSigners.length > 0) refuse(`a pool authority takes part in an instruction of ${program}`);
      continue;
    }
    const { source, destination, authority, amount } = transfer;
    const pool = pools.get(authority);
    if (poolSigners.length > (pool ? 1 : 0))
      refuse("a pool authority is named in a transfer it does not authorize");
    if (pool) {
      const from = vaults.get(source);
      if (!from || from.pool !== pool)
        refuse(`a pool authority pays from ${source}, which is not its own vault`);
      from.paid += amount;
    }
    const to = vaults.get(destination);
    // What a pool moves between its own vaults pays nothing in.
    if (to && to.pool !== pool) to.received += amount;
    else if (!to && venue.isVenueAccount(destination) && pool)
      refuse(`a pool pays into the venue's account ${destination}, which is not in the route`);
  }

  for (const leg of swap.legs) {
    const inVault = vaults.get(leg.pool.vaults[leg.pool.sideOf(leg.inputMint)]);
    const outVault = vaults.get(leg.pool.vaults[leg.pool.sideOf(leg.outputMint)]);
    if (!inVault || !outVault) refuse(`pool ${leg.pool.key} is not in the route`);
    if (outVault.paid > leg.maxOut)
      refuse(`pool ${leg.pool.key} would pay ${outVault.paid}, more than the quoted ${leg.maxOut}`);
    if (inVault.paid > 0n) refuse(`pool ${leg.pool.key} would pay out of its input vault`);
    if (inVault.received < leg.inAmount)
      refuse(`pool ${leg.pool.key} would receive ${inVault.received}, less than the quoted ${leg.inAmount}`);
  }
}

/** Whether an instruction names exactly `expected`'s accounts, in order, with exactly its data. */
function sameInstruction(
  expected: Instruction,
  accounts: readonly string[],
  data: ReadonlyUint8Array,
): boolean {
  const want = expected.accounts ?? [];
  const bytes = expected.data ?? EMPTY;
  return (
    want.length === accounts.length &&
    want.every((account, i) => account.address === accounts[i]) &&
    bytes.length === data.length &&
    bytes.every((byte, i) => byte === data[i])
  );
}

interface TokenTransfer {
  source: string;
  destination: string;
  authority: string;
  amount: bigint;
}

/** The accounts and amount of a token `Transfer` or `TransferChecked`, if that is what the instruction is. */
function tokenTransferOf(data: ReadonlyUint8Array, accounts: readonly string[]): TokenTransfer | undefined {
  const tag = data[0];
  if (tag === TRANSFER && data.length === 9 && accounts.length >= 3) {
    const [source, destination, authority] = accounts as [string, string, string];
    return { source, destination, authority, amount: readU64(data) };
  }
  if (tag === TRANSFER_CHECKED && data.length === 10 && accounts.length >= 4) {
    const [source, , destination, authority] = accounts as [string, string, string, string];
    return { source, destination, authority, amount: readU64(data) };
  }
  return undefined;
}

function readU64(data: ReadonlyUint8Array): bigint {
  return Buffer.from(data.buffer, data.byteOffset + 1, 8).readBigUInt64LE(0);
}

function refuse(reason: string): never {
  throw new UnsafeTransactionError(`the venue will not sign this transaction: ${reason}`);
}
