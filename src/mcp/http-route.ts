/**
 * `/mcp`: the MCP server over stateless streamable HTTP. Each POST gets a server of its own whose
 * tools call this same app in process with the caller's x-api-key, so the venue's access checks
 * (a key in production, never one in the URL), tiers and rate limits apply to the MCP request and to
 * every venue request a tool makes. GET and DELETE (sessions, server-sent streams) are not offered.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Chain } from "../chain/chain.js";
import type { VenueSigners } from "../chain/venue-keys.js";
import type { Config } from "../config.js";
import { ApiError, ErrorBody } from "../contract/errors.js";
import type { SimulatorControls } from "../http/sim-relay.js";
import type { ZodApp } from "../http/types.js";
import { IN_PROCESS_URL, inProcessFetch } from "./in-process-fetch.js";
import { foreignOrigin, isLoopbackHost } from "./loopback-origin.js";
import { sandboxControls, simulatorAt } from "./sandbox.js";
import { type VenueAccess, venueAccess } from "./venue-access.js";

/** A JSON-RPC message or batch: bounded like every body. */
const BODY_BYTES = 256 * 1024;
/** A JSON-RPC 2.0 message, its envelope bounded here; the MCP SDK validates what it carries. */
const JsonRpcMessage = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string().max(256), z.number().int()]).optional(),
  method: z.string().min(1).max(256).optional(),
});
const JsonRpcBody = z
  .union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)])
  .meta({ description: "A JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them" });
const JsonRpcAnswer = z
  .unknown()
  .meta({ description: "The JSON-RPC 2.0 answer (none to a notification: 202)" });
/** The streamable HTTP transport's rule: a client lists both, whichever it is answered with. */
const ACCEPTS = ["application/json", "text/event-stream"];

/**
 * The MCP SDK and the tools, loaded with the first /mcp request: a venue no agent calls pays neither
 * their load (~260 ms) nor their memory (~30 MB).
 */
let mcpModules:
  | Promise<
      [typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js"), typeof import("./server.js")]
    >
  | undefined;
const loadMcp = () =>
  (mcpModules ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    import("./server.js"),
  ]));

export interface McpRouteOptions {
  mode: Config["MODE"];
  chain: { chain: Chain; rpcUrl: string; sandbox?: { signers: VenueSigners } };
  /** Where sandbox wallets' keypair files live (DATA_DIR); the sandbox tools need it. */
  dataDir?: string;
  /** The embedded simulator, for settling markets and moving its clock (development). */
  simulator?: SimulatorControls;
  /** The address the venue listens on: on loopback, requests naming another site are refused. */
  host?: string;
}

/** Venue access for a caller of `app` with `apiKey` from `remoteAddress`, by app (for `oddsgate mcp`'s embedded venue). */
const accessByApp = new WeakMap<
  FastifyInstance,
  (apiKey: string | undefined, remoteAddress: string) => VenueAccess
>();

/** The venue access `app`'s /mcp route gives a caller, or undefined when it has no /mcp. */
export function mcpAccessOf(app: FastifyInstance, apiKey: string | undefined): VenueAccess | undefined {
  return accessByApp.get(app)?.(apiKey, "127.0.0.1");
}

/** Registers POST /mcp; GET and DELETE (sessions, server-sent streams) answer the router's 405. */
export function registerMcpRoute(app: ZodApp, options: McpRouteOptions): void {
  const { chain, dataDir } = options;
  const sandboxChain = chain.sandbox;
  // Sandbox tools only on a development venue running the embedded sandbox, with its wallets' folder.
  const sandbox =
    options.mode === "development" && sandboxChain && dataDir
      ? sandboxControls({
          dataDir,
          chain: chain.chain,
          rpcUrl: chain.rpcUrl,
          venueSigners: async () => sandboxChain.signers,
          ...(options.simulator
            ? {
                simulator: simulatorAt(
                  options.simulator.url,
                  () => options.simulator?.syncNow() ?? Promise.resolve(),
                ),
              }
            : {}),
        })
      : undefined;
  const accessFor = (apiKey: string | undefined, remoteAddress: string) =>
    venueAccess(
      { baseUrl: IN_PROCESS_URL, fetch: inProcessFetch(app, remoteAddress), ...(apiKey ? { apiKey } : {}) },
      { mode: options.mode, chain: chain.chain, ...(sandbox ? { sandbox } : {}) },
    );
  accessByApp.set(app, accessFor);

  const localOnly = options.host !== undefined && isLoopbackHost(options.host);
  app.post(
    "/mcp",
    {
      bodyLimit: BODY_BYTES,
      schema: {
        operationId: "mcp",
        tags: ["Agents"],
        summary: "The MCP server (Model Context Protocol, stateless streamable HTTP)",
        description:
          "A JSON-RPC 2.0 message or batch of the Model Context Protocol: initialize, tools/list, tools/call, resources/*, prompts/*. The tools call this venue's own routes with the caller's x-api-key. Send `Accept: application/json, text/event-stream`; answers are JSON. See docs/reference/mcp.md.",
        body: JsonRpcBody,
        response: { 200: JsonRpcAnswer, 202: JsonRpcAnswer, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const foreign = localOnly ? foreignOrigin(request.headers) : undefined;
      if (foreign)
        throw new ApiError("bad_request", `${foreign}: a local venue answers only its own machine`);
      const accept = request.headers.accept ?? "";
      if (!ACCEPTS.every((type) => accept.includes(type)))
        throw new ApiError("bad_request", `Accept must list ${ACCEPTS.join(" and ")} (MCP streamable HTTP)`);
      const [{ StreamableHTTPServerTransport }, { buildMcpServer }] = await loadMcp();
      const key = request.headers["x-api-key"];
      const server = buildMcpServer(accessFor(typeof key === "string" ? key : undefined, request.ip));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      // The transport writes the response itself.
      reply.hijack();
      reply.raw.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
}
