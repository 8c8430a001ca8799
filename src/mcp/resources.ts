/**
 * The resources: the venue's OpenAPI and AsyncAPI documents (as it publishes them), the error
 * catalogue with what to do about each code, and a market's rules.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ERRORS, type ErrorCode } from "../contract/errors.js";
import { ERROR_HINTS } from "./error-hints.js";
import type { VenueAccess } from "./venue-access.js";

const JSON_TYPE = "application/json";

/** The published documents, by resource name: its URI, what it is, and where the venue serves it. */
const DOCUMENTS = [
  [
    "openapi-markets",
    "oddsgate://openapi/markets",
    "OpenAPI 3.1 of the prediction-market data API (/api/v1)",
    "/api/v1/openapi.json",
  ],
  [
    "openapi-trade",
    "oddsgate://openapi/trade",
    "OpenAPI 3.1 of the trade API (/order, /order-status, ...)",
    "/openapi.json",
  ],
  ["asyncapi", "oddsgate://asyncapi", "AsyncAPI 3 of the venue's streams", "/asyncapi.json"],
] as const;

/** Every catalogue code with its HTTP status, whether retrying helps, and what an agent should do. */
export function errorCatalogue(): { code: ErrorCode; status: number; retryable: boolean; hint: string }[] {
  return (Object.keys(ERRORS) as ErrorCode[]).map((code) => ({
    code,
    ...ERRORS[code],
    hint: ERROR_HINTS[code],
  }));
}

/** Registers the resources. */
export function registerResources(server: McpServer, venue: VenueAccess): void {
  for (const [name, uri, description, path] of DOCUMENTS) {
    server.registerResource(name, uri, { description, mimeType: JSON_TYPE }, async () => ({
      contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(await venue.document(path)) }],
    }));
  }

  server.registerResource(
    "errors",
    "oddsgate://errors",
    {
      description:
        "The error catalogue: every {code,msg} code the venue answers with, and what to do about it",
      mimeType: JSON_TYPE,
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify({ errors: errorCatalogue() }) }],
    }),
  );

  server.registerResource(
    "market-rules",
    new ResourceTemplate("oddsgate://markets/{ticker}/rules", { list: undefined }),
    {
      description: "A market's rules: how it resolves, and when it can close early",
      mimeType: "text/markdown",
    },
    async (uri, { ticker }) => {
      const market = await venue.markets.getMarket(String(ticker));
      const sections = [
        `# ${market.ticker}: ${market.title}`,
        market.rulesPrimary,
        market.rulesSecondary ?? "",
        market.canCloseEarly && market.earlyCloseCondition
          ? `Early close: ${market.earlyCloseCondition}`
          : "",
        `Status: ${market.status}${market.result ? `, result ${market.result}` : ""}; closes ${new Date(market.closeTime * 1000).toISOString()}.`,
      ];
      return {
        contents: [{ uri: uri.href, mimeType: "text/markdown", text: sections.filter(Boolean).join("\n\n") }],
      };
    },
  );
}
