/** GET /order-status — where an escrowed order (an intent or an async order) stands, with its fills and reverts. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { OrderStatusResponse } from "../../contract/trade.js";
import type { ZodApp } from "../../http/types.js";
import type { OrderStatusDesk } from "../orders/status.js";

const OrderStatusQuery = z.object({
  signature: z.string().meta({ description: "Signature of the order's open transaction, base58" }),
  lastValidBlockHeight: z
    .string()
    .optional()
    .meta({ description: "From the order's response; accepted, not needed" }),
});

export function getOrderStatus(app: ZodApp, status: OrderStatusDesk): void {
  app.get(
    "/order-status",
    {
      schema: {
        operationId: "order_status",
        tags: ["Order"],
        summary: "Status of an escrowed order",
        querystring: OrderStatusQuery,
        response: { 200: OrderStatusResponse, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => status.status(request.query.signature),
  );
}
