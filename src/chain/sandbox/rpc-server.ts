/**
 * The sandbox's Solana JSON-RPC endpoint over HTTP (default 127.0.0.1:8899): JSON-RPC 2.0 single and
 * batch requests, answered with HTTP 200 and JSON-RPC errors as a validator answers them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
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

export interface RpcServer {
  /** Starts listening; resolves with the bound port. */
  listen(options: { host: string; port: number }): Promise<number>;
  close(): Promise<void>;
}

const JSON_TYPE = "application/json; charset=utf-8";

function sendJson(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/**
 * Creates (without listening) the HTTP server answering the JSON-RPC for `chain`. It is plain
 * `node:http`: one route, a body read as text (malformed JSON gets JSON-RPC's -32700 whatever its
 * content type), and no per-request framework work on the `sendTransaction` hot path.
 */
export function createRpcServer(chain: SandboxChain): RpcServer {
  const methods = createRpcMethods(chain);
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0];
    if (path === "/" && request.method === "POST") {
      readBody(request, response, (body) => {
        answerBody(methods, body).then(
          (answer) => sendJson(response, 200, JSON.stringify(answer)),
          () =>
            sendJson(
              response,
              500,
              JSON.stringify(errorResponse(null, RPC_ERROR.internalError, "Internal error")),
            ),
        );
      });
      return;
    }
    if (path === "/health" && (request.method === "GET" || request.method === "HEAD")) {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": 2 });
      response.end(request.method === "HEAD" ? undefined : "ok");
      return;
    }
    request.resume();
    sendJson(
      response,
      404,
      JSON.stringify({
        message: `Route ${request.method}:${request.url} not found`,
        error: "Not Found",
        statusCode: 404,
      }),
    );
  });
  // As Fastify did: keep idle client connections open well past Node's 5 s default.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return {
    listen: ({ host, port }) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

const KEEP_ALIVE_MS = 72_000;

// Reads the whole body as UTF-8 text, refusing one larger than BODY_LIMIT with 413.
function readBody(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  onBody: (body: string) => void,
): void {
  const declared = Number(request.headers["content-length"]);
  if (declared > BODY_LIMIT) {
    tooLarge(request, response);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  request.on("data", (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > BODY_LIMIT) {
      refused = true;
      tooLarge(request, response);
      return;
    }
    chunks.push(chunk);
  });
  request.on("end", () => {
    if (refused) return;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    onBody(body.toString("utf8"));
  });
  request.on("error", () => {
    refused = true;
  });
}

function tooLarge(request: http.IncomingMessage, response: http.ServerResponse): void {
  request.resume();
  response.setHeader("connection", "close");
  sendJson(
    response,
    413,
    JSON.stringify({ statusCode: 413, error: "Payload Too Large", message: "Request body is too large" }),
  );
}
