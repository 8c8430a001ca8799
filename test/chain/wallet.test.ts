import fs from "node:fs";
import { generateKeyPairSigner } from "@solana/kit";
import Fastify from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { devFaucet } from "../../src/chain/routes/dev-faucet.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import {
  airdropSol,
  createWallet,
  faucetTokens,
  parseUiAmount,
  resolveMint,
  resolveWallet,
  walletBalance,
  walletFile,
} from "../../src/chain/wallet.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { toWireError } from "../../src/http/errors.js";
import type { ZodApp } from "../../src/http/types.js";
import { tempDir } from "../support/backends.js";
import { startTestChain, TEST_MARKETS, TEST_VENUE_SEED, type TestChain } from "./harness.js";

describe("wallet commands and the dev faucet", () => {
  const dir = tempDir();
  let started: TestChain;
  let chain: RpcChain;

  beforeAll(async () => {
    started = await startTestChain({ DATA_DIR: dir.dir });
    // The CLI reaches the chain the way any other process does: over its JSON-RPC.
    chain = new RpcChain({ url: started.rpcUrl, pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await started?.stop();
    await dir.cleanup();
  });

  it("creates a keypair file readable by its owner only, and never overwrites it", () => {
    const file = walletFile(dir.dir, "alice");
    const address = createWallet(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toHaveLength(64);
    expect(resolveWallet(dir.dir, "alice")).toBe(address);
    expect(resolveWallet(dir.dir, address)).toBe(address);
    expect(() => createWallet(file)).toThrow(/already exists/);
    expect(() => resolveWallet(dir.dir, "nobody")).toThrow(/no wallet named nobody/);
    expect(() => walletFile(dir.dir, "../escape")).toThrow(/wallet name/);
  });

  it("names tokens by symbol and parses decimal amounts exactly", () => {
    expect(resolveMint(TEST_VENUE_SEED, "usdc")).toBe(USDC_MINT);
    expect(resolveMint(TEST_VENUE_SEED, "SOL")).toBe(WRAPPED_SOL_MINT);
    expect(resolveMint(TEST_VENUE_SEED, "dBTC")).toBe(demoTokens(TEST_VENUE_SEED)[0]?.address);
    expect(() => resolveMint(TEST_VENUE_SEED, "NOPE")).toThrow(/unknown token NOPE/);
    expect(parseUiAmount("12.5", 6)).toBe(12_500_000n);
    expect(parseUiAmount("0.000001", 6)).toBe(1n);
    expect(() => parseUiAmount("0.0000001", 6)).toThrow(/more than 6 decimals/);
    expect(() => parseUiAmount("-1", 6)).toThrow(/positive decimal/);
    expect(() => parseUiAmount("0", 6)).toThrow(/positive/);
  });

  it("airdrops SOL, grants USDC, a demo token and an outcome token, and lists the balances", async () => {
    const owner = resolveWallet(dir.dir, "alice");
    await airdropSol(chain, owner, "1.5");
    await faucetTokens(chain, started.signers, owner, USDC_MINT, "250");
    const dbtc = resolveMint(TEST_VENUE_SEED, "dBTC");
    await faucetTokens(chain, started.signers, owner, dbtc, "0.5");
    const yes = TEST_MARKETS[0]?.yesMint as never;
    await faucetTokens(chain, started.signers, owner, yes, "3");
    await faucetTokens(chain, started.signers, owner, WRAPPED_SOL_MINT, "0.25");

    const balance = await walletBalance(chain, owner);
    expect(balance.lamports).toBe(1_500_000_000n);
    expect(balance.sol).toBe("1.5");
    const byMint = Object.fromEntries(balance.tokens.map((token) => [token.mint, token.uiAmount]));
    expect(byMint).toEqual({ [USDC_MINT]: "250", [dbtc]: "0.5", [yes]: "3", [WRAPPED_SOL_MINT]: "0.25" });
  });

  it("serves POST /dev/faucet in development, refuses bad input with 400, and is absent in production", async () => {
    const build = (mode: "development" | "production") => {
      const app = Fastify().withTypeProvider<ZodTypeProvider>() as unknown as ZodApp;
      app.setValidatorCompiler(validatorCompiler);
      app.setSerializerCompiler(serializerCompiler);
      app.setErrorHandler((error, _request, reply) => {
        const wire = (error as { validation?: unknown }).validation
          ? { status: 400, body: { code: "bad_request", msg: (error as Error).message } }
          : toWireError(error);
        return reply.code(wire.status).send(wire.body);
      });
      devFaucet(app, { chain: started.chain, signers: started.signers }, mode);
      return app;
    };
    const app = build("development");
    const wallet = (await generateKeyPairSigner()).address;
    const post = (payload: object) => app.inject({ method: "POST", url: "/dev/faucet", payload });

    const granted = await post({ wallet, mint: USDC_MINT, amount: "5000000" });
    expect(granted.statusCode).toBe(200);
    expect(granted.json()).toMatchObject({ wallet, mint: USDC_MINT, amount: "5000000" });
    const [status] = await started.chain.getSignatureStatuses([granted.json().signature]);
    expect(status?.err).toBeNull();
    expect((await started.chain.getTokenAccount(granted.json().tokenAccount))?.amount).toBe(5_000_000n);

    expect((await post({ wallet: "not-an-address", mint: USDC_MINT, amount: "1" })).statusCode).toBe(400);
    expect((await post({ wallet, mint: USDC_MINT, amount: "0" })).statusCode).toBe(400);
    expect((await post({ wallet, mint: USDC_MINT, amount: "18446744073709551616" })).statusCode).toBe(400);
    const notAMint = await post({ wallet, mint: wallet, amount: "1" });
    expect(notAMint.statusCode).toBe(400);
    expect(notAMint.json()).toMatchObject({ code: "bad_request" });
    const overflow = await post({ wallet, mint: USDC_MINT, amount: "18446744073709551615" });
    expect(overflow.json()).toMatchObject({ code: "bad_request" });
    expect(overflow.json().msg).toMatch(/faucet refused/);
    await app.close();

    const production = build("production");
    expect((await production.inject({ method: "POST", url: "/dev/faucet", payload: {} })).statusCode).toBe(
      404,
    );
    await production.close();
  });
});
