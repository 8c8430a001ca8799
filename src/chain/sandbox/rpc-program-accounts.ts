/**
 * The JSON-RPC methods that search accounts rather than name them: `getProgramAccounts` (over the
 * chain's index of accounts by owner), `getTokenAccountsByDelegate` and `getTokenLargestAccounts`,
 * in Agave's shapes and bounded as public RPC nodes bound them (docs/reference/chain.md).
 */
import type { Address } from "@solana/kit";
import { forEachInSlices } from "../../slices.js";
import { addressOf } from "../base58.js";
import type { TokenAccountFilter } from "../chain.js";
import { ChainError } from "../errors.js";
import { isTokenProgram } from "../programs.js";
import { type AccountFilter, accountFiltersOf, keyRequiredAt, passesFilters } from "./rpc-account-filters.js";
import { tokenAmount } from "./rpc-encoding.js";
import {
  type AccountEncoder,
  addressParam,
  type Config,
  configParam,
  flagOf,
  invalid,
  type Params,
  type RpcMethod,
  type WithContext,
} from "./rpc-params.js";
import type { SandboxChain } from "./sandbox-chain.js";

/** Accounts one getProgramAccounts may answer with: past it the scan is refused, not cut short. */
export const MAX_PROGRAM_ACCOUNTS = 10_000;
/** Account data (bytes) one getProgramAccounts may answer with, before encoding. */
export const MAX_PROGRAM_ACCOUNT_BYTES = 64 * 1024 * 1024;
/** Accounts getTokenLargestAccounts answers with: Agave's NUM_LARGEST_ACCOUNTS. */
export const TOKEN_LARGEST_ACCOUNTS = 20;

// Agave's JSON_RPC_SERVER_ERROR_KEY_EXCLUDED_FROM_SECONDARY_INDEX and JSON_RPC_SERVER_ERROR_SCAN_ERROR.
const KEY_EXCLUDED_FROM_SECONDARY_INDEX = -32010;
const SCAN_ERROR = -32012;
// Where a token account holds its mint and its owner.
const MINT_OFFSET = 0;
const OWNER_OFFSET = 32;

interface Shared {
  encode: AccountEncoder;
  withContext: WithContext;
}

/** The account-searching methods over `chain`, for `createRpcMethods`. */
export function createProgramAccountMethods(chain: SandboxChain, shared: Shared): Record<string, RpcMethod> {
  return {
    getProgramAccounts: (params) => getProgramAccounts(chain, shared, params),
    getTokenAccountsByDelegate: async (params) => {
      const delegate = addressParam(params, 0, "delegate");
      const accounts = await chain.getTokenAccountsByDelegate(
        delegate,
        tokenAccountFilterParam(chain, params, 1),
      );
      const config = configParam(params, 2);
      return shared.withContext(
        accounts.map((token) => ({
          pubkey: token.address,
          account: shared.encode(token.address, config, "base64")(chain.peekAccount(token.address)),
        })),
      );
    },
    getTokenLargestAccounts: async (params) => {
      const mint = await chain.getMint(addressParam(params, 0, "mint"));
      if (!mint) throw invalid("Invalid param: not a Token mint");
      configParam(params, 1);
      const largest = chain
        .allTokenAccounts()
        .filter((token) => token.mint === mint.address)
        .sort((a, b) => (a.amount === b.amount ? 0 : a.amount > b.amount ? -1 : 1))
        .slice(0, TOKEN_LARGEST_ACCOUNTS);
      return shared.withContext(
        largest.map((token) => ({ address: token.address, ...tokenAmount(token.amount, mint.decimals) })),
      );
    },
  };
}

/** The `{mint}` or `{programId}` second param of getTokenAccountsByOwner and ByDelegate. */
export function tokenAccountFilterParam(
  chain: SandboxChain,
  params: Params,
  index: number,
): TokenAccountFilter {
  const filter: Config =
    typeof params[index] === "object" && params[index] !== null ? configParam(params, index) : {};
  if (typeof filter.mint === "string") {
    const mint = addressParam([filter.mint], 0, "mint");
    if (!chain.peekAccount(mint)) throw invalid("Invalid param: could not find mint");
    return { mint };
  }
  if (typeof filter.programId === "string")
    return { programId: addressParam([filter.programId], 0, "programId") };
  throw invalid("Invalid params: expected {mint} or {programId} as the second parameter");
}

async function getProgramAccounts(chain: SandboxChain, shared: Shared, params: Params) {
  const program = addressParam(params, 0, "program id");
  const config = configParam(params, 1);
  const filters = accountFiltersOf(config);
  const wrap = flagOf(config, "withContext");
  // Checked before the scan, so a bad encoding or slice is refused however many accounts match.
  shared.encode(program, config, "base58");
  const found = programAccountsMatching(chain, program, filters);
  // In slices: base64+zstd of the most a scan answers with (MAX_PROGRAM_ACCOUNT_BYTES) is seconds of
  // CPU, which would otherwise hold every other request (and each account read is a copy already).
  const value: { pubkey: Address; account: unknown }[] = [];
  await forEachInSlices(found, ({ address, account }) => {
    value.push({ pubkey: address, account: shared.encode(address, config, "base58")(account) });
  });
  return wrap ? shared.withContext(value) : value;
}

type Found = { address: Address; account: NonNullable<ReturnType<SandboxChain["peekAccount"]>> };

// The accounts `program` owns that pass `filters`, refused past the bounds (see the constants).
function programAccountsMatching(
  chain: SandboxChain,
  program: Address,
  filters: readonly AccountFilter[],
): Found[] {
  const found: Found[] = [];
  let bytes = 0;
  for (const address of candidatesOf(chain, program, filters)) {
    const account = chain.peekAccount(address);
    if (!account || account.owner !== program || !passesFilters(address, account, filters)) continue;
    bytes += account.data.length;
    if (found.length >= MAX_PROGRAM_ACCOUNTS || bytes > MAX_PROGRAM_ACCOUNT_BYTES) {
      throw new ChainError(SCAN_ERROR, "scan aborted: The accumulated scan results exceeded the limit");
    }
    found.push({ address, account });
  }
  return found;
}

// Where to look: a token program's accounts only through a mint or owner the filters name (as
// public nodes, which exclude those programs from unfiltered scans), by the owner index when they
// name the owner; any other program's accounts all.
function candidatesOf(
  chain: SandboxChain,
  program: Address,
  filters: readonly AccountFilter[],
): Iterable<Address> {
  const dataSize = filters.find((filter) => filter.kind === "dataSize")?.size;
  if (!isTokenProgram(program)) return chain.programAccountAddresses(program, dataSize);
  const owner = keyRequiredAt(filters, OWNER_OFFSET);
  if (owner) return chain.tokenAccountAddressesOf(addressOf(owner));
  if (keyRequiredAt(filters, MINT_OFFSET)) return chain.programAccountAddresses(program, dataSize);
  throw new ChainError(
    KEY_EXCLUDED_FROM_SECONDARY_INDEX,
    `${program} excluded from account secondary indexes; this RPC method unavailable for key`,
  );
}
