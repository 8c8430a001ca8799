import type { Config } from "../../config.js";
import type { Metrics } from "../../http/metrics.js";
import { registerTradeApi, type TradingApi } from "../../trading/routes/index.js";
import { appPlugin } from "./app-plugin.js";

/** The trade API, with its streams' clients and fan-out times in the metrics. */
export const tradeApi = appPlugin(
  "trade-api",
  async (app, options: { trading: TradingApi; mode: Config["MODE"]; metrics: Metrics }) => {
    const { trading, metrics } = options;
    const { quotes, books } = trading;
    quotes.onFanout((seconds) => metrics.quoteStreamFanout.observe(seconds));
    books.onFanout((seconds) => metrics.bookStreamFanout.observe(seconds));
    metrics.countStreamClients("/quote-stream", () => quotes.size);
    metrics.countStreamClients("/book-stream", () => books.size);
    await app.register(registerTradeApi(trading, options.mode));
  },
);
