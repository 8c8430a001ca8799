/**
 * Property-based fuzz of the trade API: whatever the query, `GET /order` and the token routes answer
 * a 2xx or a 4xx with a `{code, msg}` body, never a 5xx, and a 200 is a valid reference OrderResponse.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { miniCatalogue } from "../support/fixtures.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue(), settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

const NAMES = [
  "inputMint",
  "outputMint",
  "amount",
  "slippageBps",
  "userPublicKey",
  "predictionMarketSlippageBps",
  "priceImpactTolerancePct",
  "dexes",
  "excludeDexes",
  "onlyDirectRoutes",
  "maxRouteLength",
  "platformFeeBps",
  "feeAccount",
  "prioritizationFeeLamports",
  "wrapAndUnwrapSol",
  "x",
];
const value = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.bigInt({ min: -1n, max: 2n ** 70n }).map(String),
  fc.integer({ min: -5, max: 20_000 }).map(String),
  fc.constantFrom(
    USDC_MINT,
    WRAPPED_SOL_MINT,
    "11111111111111111111111111111111",
    "auto",
    "true",
    "false",
    "cpmm",
    "",
    "%ZZ",
    "1e3",
    "0x10",
    "veryHigh",
    "disabled",
  ),
);

describe("GET /order under arbitrary queries", () => {
  it("never fails with a 5xx (a 503 only as a retry), and every 200 is a reference OrderResponse", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom(...NAMES), value, { maxKeys: 8 }),
        fc.boolean(),
        async (extra, sensible) => {
          const query = sensible
            ? { inputMint: USDC_MINT, outputMint: WRAPPED_SOL_MINT, amount: "1000000", ...extra }
            : extra;
          const search = Object.entries(query)
            .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join("&");
          const response = await fetch(`${t.url}/order?${search}`);
          const body = (await response.json()) as Record<string, unknown>;
          const seen = JSON.stringify({ status: response.status, query, body });
          // A 503 is a venue still catching up under load (its chain or upstream behind): a retry, never a failure.
          if (response.status === 503) expect(body, seen).toMatchObject({ reason: "not_ready" });
          else expect(response.status, seen).toBeLessThan(500);
          if (response.status === 200) expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
          // `reason` is the venue's documented extension: what exactly refused it, where the reference code is broader.
          else if (response.status !== 503)
            expect(
              Object.keys(body)
                .filter((key) => key !== "reason")
                .sort(),
              seen,
            ).toEqual(["code", "msg"]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
