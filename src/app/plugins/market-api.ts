import type { ArchiveHistory } from "../../archive/history.js";
import type { Config } from "../../config.js";
import type { Metrics } from "../../http/metrics.js";
import type { CatalogHolder } from "../../markets/catalog-holder.js";
import type { OnchainTrades } from "../../markets/onchain-trades.js";
import { registerMarketsApi } from "../../markets/routes/index.js";
import type { MarketStreamHub } from "../../markets/ws.js";
import type { MarketRelay } from "../../upstream/relay.js";
import { appPlugin } from "./app-plugin.js";

/** The prediction-market API under /api/v1, with its stream's clients counted in the metrics. */
export const marketApi = appPlugin(
  "market-api",
  async (
    app,
    options: {
      catalog: CatalogHolder;
      mode: Config["MODE"];
      metrics: Metrics;
      relay?: MarketRelay;
      marketStream?: MarketStreamHub;
      onchainTrades?: OnchainTrades;
      history?: ArchiveHistory;
    },
  ) => {
    const { marketStream } = options;
    await app.register(
      registerMarketsApi(
        options.catalog,
        options.mode,
        options.relay,
        marketStream,
        options.onchainTrades,
        options.history,
      ),
      { prefix: "/api/v1" },
    );
    if (marketStream) options.metrics.countStreamClients("/api/v1/ws", () => marketStream.size);
  },
);
