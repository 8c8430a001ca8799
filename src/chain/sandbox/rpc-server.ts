/**
 * The sandbox's Solana JSON-RPC endpoint over HTTP (default 127.0.0.1:8899): JSON-RPC 2.0 single and
 * batch requests, answered with HTTP 200 and JSON-RPC errors as a validator answers them.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { RPC_ERROR } from "../errors.js";
import { createRpcMethods, type RpcMethod, rpcErrorOf } from "./rpc-methods.js";
import type { SandboxChain } from "./sandbox-chain.js";

// Large enough for a batch of a few hundred transactions; a single one is at most 1,232 bytes.
const BODY_LIMIT = 4 * 1024 * 1024;

type JsonRpcId = string | number | null;

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

function errorResponse(id: JsonRpcId, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: "2.0", error: { code, message }, id };
}

/** Answers one JSON-RPC request object (already parsed) with the given method table. */
export async function answerRequest(
  methods: Map<string, RpcMethod>,
  request: unknown,
): Promise<JsonRpcResponse> {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    return errorResponse(null, RPC_ERROR.invalidRequest, "Invalid request");
  }
  const { jsonrpc, id: rawId, method, params } = request as Record<string, unknown>;
  const id: JsonRpcId = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
  if (jsonrpc !== "2.0" || typeof method !== "string") {
    return errorResponse(id, RPC_ERROR.invalidRequest, "Invalid request");
  }
  const handler = methods.get(method);
  if (!handler) return errorResponse(id, RPC_ERROR.methodNotFound, "Method not found");
  if (params !== undefined && params !== null && !Array.isArray(params)) {
    return errorResponse(id, RPC_ERROR.invalidParams, "Invalid params: expected an array of parameters");
  }
  try {
    return { jsonrpc: "2.0", result: await handler((params as unknown[] | undefined) ?? []), id };
  } catch (error) {
    return { jsonrpc: "2.0", error: rpcErrorOf(error), id };
  }
}

/** Answers a raw HTTP body: one request or a batch; null when a batch held only notifications. */
export async function answerBody(methods: Map<string, RpcMethod>, body: string): Promise<unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return errorResponse(null, RPC_ERROR.parseError, "Parse error");
  }
  if (!Array.isArray(parsed)) return answerRequest(methods, parsed);
  if (parsed.length === 0) return errorResponse(null, RPC_ERROR.invalidRequest, "Invalid request");
  return Promise.all(parsed.map((request) => answerRequest(methods, request)));
}

/** Creates (without listening) the Fastify app serving the JSON-RPC for `chain`. */
export function createRpcServer(chain: SandboxChain): FastifyInstance {
  const app = Fastify({ bodyLimit: BODY_LIMIT, logger: false });
  const methods = createRpcMethods(chain);
  // Every body is read as text so that malformed JSON gets JSON-RPC's -32700, whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
  app.post("/", async (request, reply) => {
    const answer = await answerBody(methods, typeof request.body === "string" ? request.body : "");
    return reply.type("application/json; charset=utf-8").send(JSON.stringify(answer));
  });
  app.get("/health", async (_request, reply) => reply.type("text/plain").send("ok"));
  return app;
}
