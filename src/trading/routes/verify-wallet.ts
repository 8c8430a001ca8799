/** GET /verify/{address} — whether a wallet is verified (the reference's Proof check). */
import { z } from "zod";
import { isAddressText } from "../../chain/base58.js";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { WalletVerification } from "../prediction/wallet-verification.js";

const VerifyParams = z.object({
  address: z.string().meta({ description: "The wallet's address, base58" }),
});

const VerifyResponse = z
  .object({
    verified: z
      .boolean()
      .meta({ description: "Whether the wallet is verified, so prediction-market buys may go to it" }),
  })
  .meta({ id: "VerifyResponse" });

/** Registers `GET /verify/:address`. */
export function verifyWallet(app: ZodApp, wallets: WalletVerification): void {
  app.get(
    "/verify/:address",
    {
      schema: {
        operationId: "verify_wallet",
        tags: ["Verification"],
        summary: "Whether a wallet is verified",
        description:
          "Where the venue requires it (WALLET_VERIFICATION), prediction-market buys go only to verified wallets; " +
          "others are refused with unverified_wallet_not_allowed.",
        params: VerifyParams,
        response: { 200: VerifyResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { address } = request.params;
      // The route has no reference error codes, and the address is no /order parameter, so a
      // malformed one is the catalogue's bad_request (not invalid_user_public_key). The length is
      // bounded before any decoding.
      if (!isAddressText(address))
        throw new ApiError("bad_request", "address must be a wallet address (base58 of 32 bytes)");
      return { verified: wallets.isVerified(address) };
    },
  );
}
