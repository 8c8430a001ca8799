/**
 * Every cost of an order, read from the transaction the wallet is about to sign (not from what the
 * venue says about it): the tokens it moves out of the wallet, the network fee of its signatures, the
 * priority fee its compute-budget instructions set, the rent of each account it creates (and whether
 * that rent comes back), and the SOL it puts up for the venue's settling transaction. Prediction-market
 * orders are escrowed: the open transaction funds an escrow authority with a settlement budget and
 * creates its token account; the venue's settling transaction pays its own network fee from that
 * budget, closes the escrow account to the wallet and returns the rest (src/trading/prediction/escrow.ts).
 */
import { type Address, getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import { rpc } from "./wallet";

const COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111";
const SYSTEM = "11111111111111111111111111111111";
const ASSOCIATED_TOKEN = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const MEMO = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

/** Solana's fee per signature, in lamports (the base fee of every signature a transaction carries). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;
/**
 * The venue's settling transaction of an escrowed order that fills carries two signatures: the
 * escrow authority's (its fee payer) and the venue key that mints the contracts (a buy) or pays from
 * the treasury (a sale or a redemption); its fee comes out of the settlement budget.
 */
export const SETTLEMENT_SIGNATURES = 2n;
/** Bytes of a token account: 165 for the token program; the token-2022 ATA adds its type and ImmutableOwner. */
const ACCOUNT_BYTES: Record<string, number> = { [TOKEN]: 165, [TOKEN_2022]: 170 };

/** One line of SOL the order moves. */
export interface SolLine {
  key: "network" | "priority" | "rent" | "escrow" | "deposit" | "settlement" | "init";
  label: string;
  lamports: bigint;
  /** How the figure was made, in words. */
  detail: string;
  /** Whether it comes back to the wallet when the order settles (so it is not in the total). */
  returned: boolean;
}

export interface OrderCosts {
  /** Units of the input token the transaction moves out of the wallet. */
  input: bigint;
  /** SOL lines, in the order the transaction pays them. */
  lines: SolLine[];
  /** Lamports the order costs once settled: every line that does not come back. */
  lamports: bigint;
  /** Instructions the page could not account for; their costs are not in the total. */
  unknown: string[];
}

/** Rent-exempt minimum of an account of `bytes` bytes, asked of the chain. */
async function rentExempt(bytes: number): Promise<bigint> {
  return BigInt(await rpc<number>("getMinimumBalanceForRentExemption", [bytes]));
}

const u32 = (data: Uint8Array, at: number) => new DataView(data.buffer, data.byteOffset).getUint32(at, true);
const u64 = (data: Uint8Array, at: number) =>
  new DataView(data.buffer, data.byteOffset).getBigUint64(at, true);
const sol = (lamports: bigint) =>
  `${(Number(lamports) / 1e9).toFixed(9).replace(/0+$/, "").replace(/\.$/, "")}`;

/**
 * The costs to `owner` of signing `transaction` (base64, as `/order` returns it) for an escrowed
 * order. `output` names the token bought in the lines; `initCost` is the order's
 * `initPredictionMarketCost`, when the buy also initializes its market (whose settlement then creates
 * the wallet's outcome account out of the deposit).
 */
export async function orderCosts(
  transaction: string,
  owner: Address,
  about: { output: string; initCost?: number | undefined },
): Promise<OrderCosts> {
  const names = about;
  const bytes = Uint8Array.from(atob(transaction), (char) => char.charCodeAt(0));
  const { messageBytes } = getTransactionDecoder().decode(bytes);
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  if (!("staticAccounts" in message) || !("instructions" in message))
    throw new Error("a transaction message of a version this page does not read");
  if ("addressTableLookups" in message && (message.addressTableLookups?.length ?? 0) > 0)
    throw new Error("the transaction loads address lookup tables, which this page does not read");
  const keys = message.staticAccounts as readonly string[];
  const lines: SolLine[] = [];
  const unknown: string[] = [];
  let input = 0n;
  let computeUnits = 200_000n;
  let microLamports = 0n;
  const signatures = BigInt(message.header.numSignerAccounts);
  lines.push({
    key: "network",
    label: "Network fee",
    lamports: signatures * LAMPORTS_PER_SIGNATURE,
    detail: `${signatures} signature${signatures === 1n ? "" : "s"} × ${LAMPORTS_PER_SIGNATURE.toLocaleString("en-US")} lamports`,
    returned: false,
  });
  let escrow: string | null = null;
  let initPaid = false;
  for (const instruction of message.instructions) {
    const program = keys[instruction.programAddressIndex];
    const data = new Uint8Array(instruction.data ?? new Uint8Array());
    const accounts = (instruction.accountIndices ?? []).map((index) => keys[index] ?? "");
    if (program === COMPUTE_BUDGET) {
      if (data[0] === 2) computeUnits = BigInt(u32(data, 1));
      else if (data[0] === 3) microLamports = u64(data, 1);
    } else if (program === SYSTEM && u32(data, 0) === 2 && accounts[0] === owner) {
      const lamports = u64(data, 4);
      escrow ??= accounts[1] ?? null;
      if (about.initCost !== undefined && lamports === BigInt(about.initCost) && !initPaid) {
        initPaid = true;
        lines.push({
          key: "init",
          label: "Market initialization",
          lamports,
          detail: "this buy is the market's first: it pays for the market's accounts",
          returned: false,
        });
        continue;
      }
      lines.push({
        key: "deposit",
        label: "Settlement deposit",
        lamports,
        detail: "pays the settling transaction's fee; the rest comes back",
        returned: true,
      });
    } else if (program === ASSOCIATED_TOKEN && (data.length === 0 || data[0] === 0 || data[0] === 1)) {
      const [payer, account, holder, , , tokenProgram] = accounts;
      if (payer !== owner || !account) continue;
      // Created only when it does not exist yet: an account holds lamports from its creation on.
      const existing = BigInt((await rpc<{ value: number }>("getBalance", [account])).value);
      if (existing > 0n) continue;
      const size = ACCOUNT_BYTES[tokenProgram ?? ""];
      if (size === undefined) {
        unknown.push(`an account of the program ${tokenProgram}`);
        continue;
      }
      const mine = holder === owner;
      lines.push({
        key: mine ? "rent" : "escrow",
        label: mine ? `Rent of your new ${names.output} account` : "Rent of the escrow's token account",
        lamports: await rentExempt(size),
        detail: mine
          ? `${size} bytes; stays in the account while it is open`
          : "the escrow closes to you at settlement",
        returned: !mine,
      });
    } else if (
      (program === TOKEN || program === TOKEN_2022) &&
      accounts[accounts.length - 1] === owner &&
      (data[0] === 12 || data[0] === 3)
    ) {
      input += u64(data, 1);
    } else if (program !== MEMO) {
      unknown.push(`an instruction of ${program}`);
    }
  }
  if (microLamports > 0n) {
    // The priority fee is the compute-unit limit times the price per unit, in micro-lamports, rounded up.
    const lamports = (computeUnits * microLamports + 999_999n) / 1_000_000n;
    lines.splice(1, 0, {
      key: "priority",
      label: "Priority fee",
      lamports,
      detail: `${computeUnits.toLocaleString("en-US")} CU × ${microLamports.toLocaleString("en-US")} µlamports`,
      returned: false,
    });
  }
  if (initPaid) {
    // The outcome mint does not exist before the market's initialization: the settlement creates the
    // wallet's account of it, paying its rent out of the deposit.
    lines.push({
      key: "rent",
      label: `Rent of your new ${names.output} account`,
      lamports: await rentExempt(ACCOUNT_BYTES[TOKEN_2022] as number),
      detail: `${ACCOUNT_BYTES[TOKEN_2022]} bytes, created at settlement out of the deposit`,
      returned: false,
    });
  }
  if (escrow) {
    lines.push({
      key: "settlement",
      label: "Settlement fee",
      lamports: SETTLEMENT_SIGNATURES * LAMPORTS_PER_SIGNATURE,
      detail: `${SETTLEMENT_SIGNATURES} signatures × ${LAMPORTS_PER_SIGNATURE.toLocaleString("en-US")} lamports, out of the deposit`,
      returned: false,
    });
  }
  const lamports = lines.filter((line) => !line.returned).reduce((sum, line) => sum + line.lamports, 0n);
  return { input, lines, lamports, unknown };
}

/** Lamports as SOL text, every digit kept: 2089280 as "0.00208928". */
export function solText(lamports: bigint): string {
  return sol(lamports);
}
