/** The test-support validator against the vendored reference OpenAPI document. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateAgainstReference } from "../support/reference-schema.js";

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/** The live example of dflow-trade-api.md §3.2 (0.01 SOL → USDC with `userPublicKey`), abbreviations expanded. */
function liveOrderResponse(): Record<string, unknown> {
  return {
    inputMint: SOL,
    inAmount: "10000000",
    outputMint: USDC,
    outAmount: "928220",
    otherAmountThreshold: "926364",
    minOutAmount: "926364",
    slippageBps: 20,
    platformFee: null,
    priceImpactPct: "0",
    routePlan: [
      {
        venue: "BisonFi",
        marketKey: "8FnXXUCfGMy8RZkHLXgyZgDPGhvEM9pcbd8556btcGw1",
        inputMint: SOL,
        outputMint: USDC,
        inAmount: "10000000",
        outAmount: "928220",
        inputMintDecimals: 9,
        outputMintDecimals: 6,
      },
    ],
    contextSlot: 440907166,
    executionMode: "sync",
    lastValidBlockHeight: 418956691,
    prioritizationFeeLamports: 27,
    computeUnitLimit: 200000,
    prioritizationType: { computeBudget: { microLamports: 134, estimatedMicroLamports: 134 } },
  };
}

describe("validateAgainstReference", () => {
  it("loads the vendored 3.1 document with the schemas the tests rely on", () => {
    const text = readFileSync(new URL("../support/dflow-trade-openapi.json", import.meta.url), "utf8");
    const document = JSON.parse(text) as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["OrderResponse", "RoutePlanLeg", "TokensWithDecimalsDoc"]),
    );
  });

  it("accepts the live OrderResponse example", () => {
    expect(validateAgainstReference("OrderResponse", liveOrderResponse())).toEqual([]);
  });

  it("accepts a quote-only OrderResponse (no userPublicKey fields) and a platform fee object", () => {
    const body = liveOrderResponse();
    for (const key of [
      "lastValidBlockHeight",
      "prioritizationFeeLamports",
      "computeUnitLimit",
      "prioritizationType",
    ]) {
      delete body[key];
    }
    body.platformFee = { amount: "1856", feeBps: 20, mode: "outputMint" };
    expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  });

  it("rejects inAmount given as a number, naming the path", () => {
    const errors = validateAgainstReference("OrderResponse", { ...liveOrderResponse(), inAmount: 10000000 });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join("\n")).toContain("$.inAmount");
    expect(errors.join("\n")).toMatch(/must be string/);
  });

  it("rejects a missing executionMode", () => {
    const body = liveOrderResponse();
    delete body.executionMode;
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toMatch(/executionMode/);
  });

  it("rejects an unknown executionMode and a route leg with a numeric amount", () => {
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), executionMode: "later" }),
    ).not.toEqual([]);
    const body = liveOrderResponse();
    (body.routePlan as Record<string, unknown>[])[0]!.outAmount = 928220;
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toContain("$.routePlan.0");
  });

  it("checks int32 ranges and non-negative minimums", () => {
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), computeUnitLimit: 2 ** 31 }),
    ).not.toEqual([]);
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), slippageBps: -1 }),
    ).not.toEqual([]);
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), slippageBps: 2.5 }),
    ).not.toEqual([]);
  });

  it("accepts [[mint, decimals], ...] for TokensWithDecimalsDoc (an array of [string, integer] pairs)", () => {
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, 9]])).toEqual([]);
    expect(
      validateAgainstReference("TokensWithDecimalsDoc", [
        [SOL, 9],
        [USDC, 6],
      ]),
    ).toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [])).toEqual([]);
  });

  it("rejects malformed TokensWithDecimalsDoc entries", () => {
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, "9"]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[9, SOL]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, 9, 0]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", { [SOL]: 9 })).not.toEqual([]);
  });

  it("rejects a route leg carrying `data`: it matches both RoutePlanLeg branches of the oneOf", () => {
    // A quirk of the reference document: SingleMarketRoutePlanLeg does not forbid extra properties, so a
    // DynamicRoutePlanLeg (the same fields plus `data`) satisfies both branches and `oneOf` fails. Only
    // legs without `data` validate; this pins that down so nobody emits `data` expecting it to pass.
    const body = liveOrderResponse();
    (body.routePlan as Record<string, unknown>[])[0]!.data = "AQID";
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toMatch(/\$\.routePlan\.0: must match exactly one schema in oneOf/);
  });

  it("throws for a schema name the document does not have", () => {
    expect(() => validateAgainstReference("NoSuchSchema", {})).toThrow(/NoSuchSchema/);
  });
});
