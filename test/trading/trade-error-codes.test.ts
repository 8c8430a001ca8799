/**
 * Every refusal of a trade route carries a code of that route's enum in the reference OpenAPI
 * document, and its body is the route's reference error schema: over real HTTP, each parameter the
 * venue declares for a route is sent missing, malformed, repeated and oversized. A parameter that
 * fails the route's schema (missing, or repeated and so an array) gets that parameter's own code.
 * Unknown parameters are ignored, and the metadata API keeps its `bad_request`.
 */
import { readFileSync } from "node:fs";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { IntentQuoteResponse } from "../../src/contract/trade.js";
import { OrderRefused, TradingNotReady } from "../../src/trading/errors.js";
import { tradeApiError } from "../../src/trading/routes/errors.js";
import { INTENT_PARAM_CODES } from "../../src/trading/routes/get-intent.js";
import { ORDER_STATUS_PARAM_CODES } from "../../src/trading/routes/get-order-status.js";
import { QUOTE_PARAM_CODES } from "../../src/trading/routes/get-quote.js";
import { ORDER_PARAM_CODES } from "../../src/trading/routes/order-params.js";
import { SUBMIT_INTENT_FIELD_CODES } from "../../src/trading/routes/submit-intent.js";
import { UnsafeTransactionError } from "../../src/trading/tx/signing-guard.js";
import { signWithKit } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "trade-error-codes-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
/** A well-formed signature no order was opened with. */
const UNKNOWN_SIGNATURE = "1".repeat(64);
const OVERSIZED = "1".repeat(4_000);
const MALFORMED = "~not*valid~";

const reference = JSON.parse(
  readFileSync(new URL("../support/dflow-trade-openapi.json", import.meta.url), "utf8"),
) as { components: { schemas: Record<string, { enum?: string[] }> } };

/** The codes of an enum schema of the reference document. */
function referenceCodes(name: string): Set<string> {
  const codes = reference.components.schemas[name]?.enum;
  if (!codes) throw new Error(`no enum ${name} in the reference document`);
  return new Set(codes);
}

let t: TestServer;
/** The query parameters the venue's own OpenAPI document declares, per path. */
let declared: Record<string, { name: string; required: boolean }[]>;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  const document = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
    paths: Record<string, { get?: { parameters?: { name: string; required?: boolean }[] } }>;
  };
  declared = Object.fromEntries(
    Object.entries(document.paths).map(([path, item]) => [
      path,
      (item.get?.parameters ?? []).map(({ name, required }) => ({ name, required: required === true })),
    ]),
  );
}, 120_000);
afterAll(async () => t?.stop());

interface Answer {
  status: number;
  body: { code?: string; msg?: string } & Record<string, unknown>;
}

async function get(path: string, query: readonly (readonly [string, string])[]): Promise<Answer> {
  const response = await fetch(
    `${t.url}${path}?${new URLSearchParams(query.map(([k, v]): [string, string] => [k, v]))}`,
  );
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

async function post(
  path: string,
  body: string | undefined,
  contentType = "application/json",
): Promise<Answer> {
  const response = await fetch(`${t.url}${path}`, {
    method: "POST",
    ...(body === undefined ? {} : { headers: { "content-type": contentType }, body }),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

/** A refusal with a code of `enumName`, whose body is the reference's `schema`. */
function expectRefusal(answer: Answer, schema: string, enumName: string, what: string): void {
  const { status, body } = answer;
  expect(status, `${what}: ${JSON.stringify(body)}`).toBe(400);
  expect(referenceCodes(enumName).has(body.code as string), `${what}: ${body.code}`).toBe(true);
  expect(validateAgainstReference(schema, body), what).toEqual([]);
  // `reason`, where present, is the venue's own exact code behind the reference's broader one.
  expect(
    Object.keys(body).filter((key) => key !== "reason"),
    what,
  ).toEqual(["code", "msg"]);
}

interface QueryRoute {
  path: string;
  /** A query that is answered (200, or 404 for an order nobody opened). */
  valid: Record<string, string>;
  /** The reference's error schema and code enum per status this route answers errors with. */
  schemas: Record<number, [schema: string, codes: string]>;
  /** Each parameter's code when it fails the route's schema. */
  codes: Readonly<Record<string, string>>;
  /** Parameters the venue takes whatever their value (the reference's is read and not needed). */
  ignored?: readonly string[];
}

const QUERY_ROUTES: QueryRoute[] = [
  {
    path: "/order",
    valid: { inputMint: USDC_MINT, outputMint: dETH, amount: "1000000" },
    schemas: { 400: ["OrderBadRequestResponse", "OrderBadRequestCode"] },
    codes: ORDER_PARAM_CODES,
  },
  {
    path: "/intent",
    valid: { inputMint: USDC_MINT, outputMint: dETH, amount: "1000000" },
    schemas: { 400: ["IntentBadRequestResponse", "IntentBadRequestCode"] },
    codes: INTENT_PARAM_CODES,
  },
  {
    path: "/quote",
    valid: { inputMint: USDC_MINT, outputMint: dETH, amount: "1000000" },
    schemas: { 400: ["QuoteBadRequestResponse", "QuoteBadRequestCode"] },
    codes: QUOTE_PARAM_CODES,
  },
  {
    path: "/order-status",
    valid: { signature: UNKNOWN_SIGNATURE },
    schemas: {
      400: ["OrderStatusBadRequestResponse", "OrderStatusBadRequestCode"],
      404: ["OrderStatusNotFoundResponse", "OrderStatusNotFoundCode"],
    },
    codes: ORDER_STATUS_PARAM_CODES,
    ignored: ["lastValidBlockHeight"],
  },
];

describe.each(QUERY_ROUTES)("GET $path", (route) => {
  const [schema, codes] = route.schemas[400] as [string, string];
  const validAnswer = (answer: Answer, what: string) => {
    if (answer.status === 200) return;
    const [expected, enumName] = route.schemas[answer.status] ?? ["(none)", "(none)"];
    expect(answer.status === 400, `${what}: ${JSON.stringify(answer.body)}`).toBe(false);
    expect(referenceCodes(enumName).has(answer.body.code as string), what).toBe(true);
    expect(validateAgainstReference(expected, answer.body), what).toEqual([]);
  };

  it("answers the valid query, and ignores unknown parameters, even repeated", async () => {
    const base = Object.entries(route.valid);
    validAnswer(await get(route.path, base), "valid");
    validAnswer(await get(route.path, [...base, ["nonsense", "1"], ["nonsense", "2"]]), "unknown");
  });

  it("refuses each parameter missing, malformed, repeated and oversized with the route's codes", async () => {
    const parameters = declared[route.path] ?? [];
    expect(parameters.length).toBeGreaterThan(0);
    for (const { name, required } of parameters) {
      const others = Object.entries(route.valid).filter(([key]) => key !== name);
      const own = route.codes[name];
      expect(own, `${name} has a code`).toBeDefined();
      expect(referenceCodes(codes).has(own as string), `${name}: ${own}`).toBe(true);

      if (required) {
        const missing = await get(route.path, others);
        expectRefusal(missing, schema, codes, `${name} missing`);
        expect(missing.body.code, `${name} missing`).toBe(own);
        expect(missing.body.msg, `${name} missing`).toContain(name);
      }
      const repeated = await get(route.path, [...others, [name, "1"], [name, "2"]]);
      expectRefusal(repeated, schema, codes, `${name} repeated`);
      expect(repeated.body.code, `${name} repeated`).toBe(own);
      expect(repeated.body.msg, `${name} repeated`).toContain(name);

      for (const [kind, value] of [
        ["malformed", MALFORMED],
        ["oversized", OVERSIZED],
      ] as const) {
        const answer = await get(route.path, [...others, [name, value]]);
        if (route.ignored?.includes(name)) validAnswer(answer, `${name} ${kind}`);
        else expectRefusal(answer, schema, codes, `${name} ${kind}`);
      }
    }
  });
});

describe("GET /order-status", () => {
  it("answers an order nobody opened with the reference's 404", async () => {
    const { status, body } = await get("/order-status", [["signature", UNKNOWN_SIGNATURE]]);
    expect(status).toBe(404);
    expect(body.code).toBe("not_found");
    expect(validateAgainstReference("OrderStatusNotFoundResponse", body)).toEqual([]);
  });
});

describe("GET /prediction-market-init", () => {
  it("refuses a repeated parameter with that parameter's code", async () => {
    for (const [name, other, code] of [
      ["payer", "outcomeMint", "invalid_payer"],
      ["outcomeMint", "payer", "invalid_outcome_mint"],
    ] as const) {
      const answer = await get("/prediction-market-init", [
        [other, "11111111111111111111111111111112"],
        [name, "1"],
        [name, "2"],
      ]);
      expectRefusal(
        answer,
        "PredictionMarketInitBadRequestResponse",
        "PredictionMarketInitBadRequestCode",
        name,
      );
      expect(answer.body.code, name).toBe(code);
    }
  });

  it("requires both parameters, as the reference does: each missing is refused with its code", async () => {
    const payer = "11111111111111111111111111111112";
    for (const [query, code] of [
      [[["outcomeMint", payer]], "invalid_payer"],
      [[["payer", payer]], "invalid_outcome_mint"],
    ] as const) {
      const answer = await get(
        "/prediction-market-init",
        query.map(([k, v]) => [k, v]),
      );
      expectRefusal(
        answer,
        "PredictionMarketInitBadRequestResponse",
        "PredictionMarketInitBadRequestCode",
        code,
      );
      expect(answer.body.code, code).toBe(code);
    }
    const operation = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string; required?: boolean }[] } }>;
    };
    const parameters = operation.paths["/prediction-market-init"]?.get.parameters ?? [];
    expect(
      parameters
        .filter((parameter) => parameter.required)
        .map((parameter) => parameter.name)
        .sort(),
    ).toEqual(["outcomeMint", "payer"]);
  });
});

describe("the token and venue routes", () => {
  it("take no parameters: any is ignored", async () => {
    for (const path of ["/tokens", "/tokens-with-decimals", "/venues"]) {
      const { status } = await get(path, [
        ["amount", "1"],
        ["amount", "2"],
        ["inputMint", OVERSIZED],
      ]);
      expect(status, path).toBe(200);
    }
  });
});

describe("POST /submit-intent", () => {
  const schema = "SubmitIntentBadRequestResponse";
  const codes = "SubmitIntentBadRequestCode";
  let quote: IntentQuoteResponse;
  let signed: string;

  beforeAll(async () => {
    const wallet = await generateKeyPairSigner();
    const { status, body } = await get("/intent", [
      ["inputMint", USDC_MINT],
      ["outputMint", dETH],
      ["amount", "1000000"],
      ["userPublicKey", wallet.address],
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    quote = IntentQuoteResponse.parse(body);
    signed = await signWithKit(wallet, quote.openTransaction as string);
  });

  /** The code a body field gets when it fails the schema: its own, else its nearest parent's. */
  const codeOf = (path: string): string => {
    for (let parts = path.split("."); ; parts = parts.slice(0, -1)) {
      const code = SUBMIT_INTENT_FIELD_CODES[parts.join(".")];
      if (code) return code;
    }
  };

  it("refuses a body that is missing, not JSON or not an object with invalid_open_transaction", async () => {
    for (const [what, body] of [
      ["no body", undefined],
      ["empty", ""],
      ["not JSON", "{quoteResponse:"],
      ["an array", "[]"],
      ["a string", '"x"'],
      ["null", "null"],
    ] as const) {
      const answer = await post("/submit-intent", body);
      expectRefusal(answer, schema, codes, what);
      expect(answer.body.code, what).toBe("invalid_open_transaction");
    }
  });

  it("refuses a body of another media type with invalid_open_transaction, the venue's 415 as its reason", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", ";;;"]) {
      const answer = await post("/submit-intent", "{}", type);
      expectRefusal(answer, schema, codes, type);
      expect(answer.body, type).toMatchObject({
        code: "invalid_open_transaction",
        reason: "unsupported_media_type",
      });
    }
  });

  it("refuses each field missing, malformed, repeated and oversized with the route's codes", async () => {
    /** The body with `field` (top level, or of the quote) set to `value`, or left out when undefined. */
    const body = (field: string, inQuote: boolean, value: unknown) => {
      const quoteResponse: Record<string, unknown> = { ...quote };
      const request: Record<string, unknown> = { quoteResponse, signedOpenTransaction: signed };
      const parent = inQuote ? quoteResponse : request;
      if (value === undefined) delete parent[field];
      else parent[field] = value;
      return JSON.stringify(request);
    };
    const fields = [
      { field: "signedOpenTransaction", inQuote: false, current: signed, malformed: "not base64 at all!" },
      { field: "quoteResponse", inQuote: false, current: quote, malformed: "a quote" },
      ...Object.entries(quote).map(([field, current]) => ({
        field,
        inQuote: true,
        current,
        // The wrong JSON type for the field: a string where a number goes, else a number.
        malformed: typeof current === "number" ? String(current) : 12,
      })),
    ];
    for (const { field, inQuote, current, malformed } of fields) {
      const path = inQuote ? `quoteResponse.${field}` : field;
      for (const [kind, value] of [
        ["missing", undefined],
        ["malformed", malformed],
        ["repeated", [current, current]],
        ["oversized", OVERSIZED.repeat(2)],
      ] as const) {
        const answer = await post("/submit-intent", body(field, inQuote, value));
        const what = `${path} ${kind}`;
        expectRefusal(answer, schema, codes, what);
        if (kind === "repeated") expect(answer.body.code, what).toBe(codeOf(path));
      }
    }
  });
});

describe.each(["/swap", "/swap-instructions"])("POST %s", (path) => {
  const schema = "SwapBadRequestResponse";
  const codes = "SwapBadRequestCode";
  let quote: Record<string, unknown>;
  let user: string;

  beforeAll(async () => {
    const { status, body } = await get("/quote", [
      ["inputMint", USDC_MINT],
      ["outputMint", dETH],
      ["amount", "1000000"],
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    quote = body;
    // Unfunded: a request that got past every check would be refused for its funds, never issued.
    user = (await generateKeyPairSigner()).address;
  });

  it("refuses a body that is missing, not JSON or not an object with route_is_empty", async () => {
    for (const [what, body] of [
      ["no body", undefined],
      ["empty", ""],
      ["not JSON", "{quoteResponse:"],
      ["an array", "[]"],
      ["null", "null"],
    ] as const) {
      const answer = await post(path, body);
      expectRefusal(answer, schema, codes, what);
      expect(answer.body.code, what).toBe("route_is_empty");
    }
  });

  it("refuses a body of another media type with route_is_empty, the venue's 415 as its reason", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const answer = await post(path, "{}", type);
      expectRefusal(answer, schema, codes, type);
      expect(answer.body, type).toMatchObject({ code: "route_is_empty", reason: "unsupported_media_type" });
    }
  });

  it("refuses each field it reads missing, malformed, repeated and oversized with the route's codes", async () => {
    const read = [
      "inputMint",
      "inAmount",
      "outputMint",
      "outAmount",
      "otherAmountThreshold",
      "slippageBps",
      "routePlan",
    ];
    const fields = [
      { field: "userPublicKey", inQuote: false, current: user, required: true },
      { field: "quoteResponse", inQuote: false, current: quote, required: true },
      { field: "platformFee", inQuote: true, current: quote.platformFee, required: false },
      ...read.map((field) => ({ field, inQuote: true, current: quote[field], required: true })),
      ...["feeAccount", "sponsor", "outputCloseAuthority", "destinationTokenAccount", "wrapAndUnwrapSol"].map(
        (field) => ({ field, inQuote: false, current: undefined, required: false }),
      ),
    ];
    for (const { field, inQuote, current, required } of fields) {
      const body = (value: unknown) => {
        const quoteResponse: Record<string, unknown> = { ...quote };
        const request: Record<string, unknown> = { userPublicKey: user, quoteResponse };
        const parent = inQuote ? quoteResponse : request;
        if (value === undefined) delete parent[field];
        else parent[field] = value;
        return JSON.stringify(request);
      };
      const cases: [string, unknown][] = [
        ["malformed", typeof current === "number" ? String(current) : 12],
        ["repeated", [current ?? 1, current ?? 1]],
        ["oversized", OVERSIZED.repeat(2)],
      ];
      if (required) cases.push(["missing", undefined]);
      for (const [kind, value] of cases) {
        const what = `${inQuote ? "quoteResponse." : ""}${field} ${kind}`;
        expectRefusal(await post(path, body(value)), schema, codes, what);
      }
    }
  });
});

describe("refusals no request here provokes", () => {
  const on = (url: string, query: Record<string, string> = {}) => ({ routeOptions: { url }, query });
  const code = (error: unknown, request: ReturnType<typeof on>) => tradeApiError(error, request)?.code;

  it("names the account a transaction the venue will not sign was refused for", () => {
    const fee = "FeeAccount1111111111111111111111111111111111";
    const unsafe = (reason: string) =>
      new UnsafeTransactionError(`the venue will not sign this transaction: ${reason}`);
    const request = on("/order", { userPublicKey: "User111", feeAccount: fee, destinationWallet: "Dest111" });
    expect(code(unsafe(`a pool pays into the venue's account ${fee}`), request)).toBe("invalid_fee_account");
    expect(code(unsafe("its party Dest111 is one of the venue's accounts"), request)).toBe(
      "invalid_destination_wallet",
    );
    expect(code(unsafe("it would be complete without the user"), request)).toBe("invalid_user_public_key");
  });

  it("gives each route's reference name to what it has no code for", () => {
    const zero = new OrderRefused("zero_out_amount", "the route pays nothing");
    expect(code(zero, on("/order"))).toBe("zero_out_amount");
    expect(code(zero, on("/intent"))).toBe("route_not_found");
    const clock = new TradingNotReady("clock", "no blockhash yet");
    expect(code(clock, on("/order"))).toBe("amm_map_lagging");
    expect(code(clock, on("/intent"))).toBe("amm_map_lagging");
    expect(code(clock, on("/submit-intent"))).toBe("blockhash_unavailable");
    // Errors of other kinds are not the trade mapping's to name, except on a trade route.
    expect(tradeApiError(new TypeError("bug"), on("/api/v1/events"))).toBeUndefined();
    expect(code(new TypeError("bug"), on("/order"))).toBe("failed_to_construct_order");
    for (const [route, schema] of [
      ["/order", "OrderServiceUnavailableResponse"],
      ["/intent", "IntentServiceUnavailableResponse"],
    ] as const) {
      const error = tradeApiError(clock, on(route));
      expect(validateAgainstReference(schema, { code: error?.code, msg: error?.message })).toEqual([]);
    }
  });
});

describe("the metadata API", () => {
  it("keeps bad_request for a parameter that fails its schema", async () => {
    const { status, body } = await get("/api/v1/events", [["limit", "abc"]]);
    expect(status).toBe(400);
    expect(body.code).toBe("bad_request");
  });
});
