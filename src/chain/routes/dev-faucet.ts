/**
 * POST /dev/faucet {wallet, mint, amount} — development mode only (contract §7): mints USDC, CASH, a
 * demo token or an outcome token (or wraps SOL) into the wallet's associated token account on the
 * sandbox chain. Production deployments do not register it, so it answers 404 there.
 */
import { isAddress } from "@solana/kit";
import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { Chain } from "../chain.js";
import { ChainError, RPC_ERROR } from "../errors.js";
import { faucet } from "../faucet.js";
import type { VenueSigners } from "../venue-keys.js";

const U64_MAX = 2n ** 64n - 1n;

const address = (name: string) =>
  z
    .string()
    // A type guard: the parsed body holds Addresses, checked here where they enter.
    .refine(isAddress, { message: `${name} must be a base58 Solana address` })
    .meta({ description: `${name}, base58` });

const Body = z.object({
  wallet: address("wallet"),
  mint: address("mint"),
  amount: z
    .union([z.string().regex(/^[0-9]{1,20}$/), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)])
    .transform((value) => BigInt(value))
    .refine((value) => value > 0n && value <= U64_MAX, {
      message: "amount must be a positive integer of the token's smallest unit, at most 2^64-1",
    })
    .meta({
      description: "Amount in the token's smallest unit, as a string of an integer",
      example: "1000000",
    }),
});

const Grant = z
  .object({
    signature: z.string(),
    wallet: z.string(),
    mint: z.string(),
    tokenAccount: z.string(),
    amount: z.string(),
  })
  .meta({ id: "FaucetGrant" });

export interface DevFaucetDependencies {
  chain: Chain;
  signers: VenueSigners;
}

/** Registers `POST /dev/faucet`; does nothing in production mode. */
export function devFaucet(
  app: ZodApp,
  deps: DevFaucetDependencies,
  mode: "development" | "production",
): void {
  if (mode !== "development") return;
  app.post(
    "/dev/faucet",
    {
      schema: {
        operationId: "devFaucet",
        tags: ["Development"],
        summary: "Fund a wallet with sandbox tokens (development mode only)",
        body: Body,
        response: { 200: Grant, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      const { wallet, mint, amount } = request.body;
      try {
        const grant = await faucet(deps.chain, deps.signers, wallet, mint, amount);
        return {
          signature: grant.signature,
          wallet,
          mint,
          tokenAccount: grant.tokenAccount,
          amount: amount.toString(),
        };
      } catch (error) {
        throw faucetApiError(error);
      }
    },
  );
}

// A refused grant is the caller's mistake (unknown mint, supply overflow); anything else is the chain's.
function faucetApiError(error: unknown): unknown {
  if (!(error instanceof ChainError)) return error;
  if (error.code === RPC_ERROR.invalidParams || error.code === RPC_ERROR.sendTransactionPreflightFailure) {
    return new ApiError("bad_request", `faucet refused: ${error.message}`);
  }
  return new ApiError("not_ready", `the sandbox chain could not take the grant (${error.message}); retry`);
}
