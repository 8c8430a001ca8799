/** The typed clients, as users import them: `import { MarketsClient } from "oddsgate/client"`. */
export * from "./markets.js";
export * from "./streams.js";
export * from "./trade.js";
export * from "./verify-response.js";
