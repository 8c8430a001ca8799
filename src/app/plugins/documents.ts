import type { Config } from "../../config.js";
import {
  BOOK_STREAM,
  MARKET_DATA_STREAM,
  priorityFeesStream,
  QUOTE_STREAM,
  type StreamChannel,
} from "../../contract/streams.js";
import { asyncApiDocument } from "../../http/asyncapi.js";
import { registerDocs } from "../../http/docs.js";
import { ASYNCAPI_PATH } from "../../http/openapi.js";
import { PriorityFeesResponse } from "../../trading/routes/get-priority-fees.js";
import { appPlugin } from "./app-plugin.js";

/** The AsyncAPI document of the streams this listener offers, and the docs page of its OpenAPI ones. */
export const documents = appPlugin(
  "documents",
  async (
    app,
    options: { mode: Config["MODE"]; marketsApi: boolean; marketDataStream: boolean; trading: boolean },
  ) => {
    const streams: StreamChannel[] = [
      ...(options.marketDataStream ? [MARKET_DATA_STREAM] : []),
      ...(options.trading ? [QUOTE_STREAM, BOOK_STREAM, priorityFeesStream(PriorityFeesResponse)] : []),
    ];
    // The host is the one the caller reached: the document names this listener, however it is addressed.
    app.get(ASYNCAPI_PATH, { schema: { hide: true } }, async (request) =>
      asyncApiDocument(streams, { host: request.host, mode: options.mode }),
    );
    // The page renders OpenAPI only: each OpenAPI document's description links the AsyncAPI one.
    await registerDocs(app, [
      ...(options.marketsApi ? [{ title: "Prediction markets", url: "/api/v1/openapi.json" }] : []),
      ...(options.trading ? [{ title: "Trading", url: "/openapi.json" }] : []),
    ]);
  },
);
