/**
 * The sandbox's Solana JSON-RPC endpoint over HTTP (default 127.0.0.1:8899): JSON-RPC 2.0 single and
 * batch requests, answered with HTTP 200 and JSON-RPC errors as a validator answers them. Every
 * request is bounded (src/limits.ts): its head and body in time and size, a batch in calls; in
 * production an access gate may demand an API key first.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answerClientError } from "../../http/client-errors.js";
import { HTTP_LIMITS, type ListenerTimeouts, nodeServerOptions, RPC_LIMITS } from "../../limits.js";
import { RPC_ERROR } from "../errors.js";
import { createRpcMethods, type RpcMethod, type RpcMethodOptions, rpcErrorOf } from "./rpc-methods.js";
import type { ChainLogger, SandboxChain } from "./sandbox-chain.js";

/**
 * JSON-RPC error code of a request refused for want of an accepted API key (with HTTP 401). Solana
 * nodes use -32001 to -32016 for their own server errors, so this sits apart from them and echoes
 * the HTTP status.
 */
export const RPC_UNAUTHORIZED = -32401;

/** Time and size bounds of an HTTP listener (HTTP_LIMITS by default). */
export type HttpListenerLimits = ListenerTimeouts & { maxHeaderBytes: number };

/** Bounds of the JSON-RPC (RPC_LIMITS by default). */
export interface RpcLimits {
  bodyBytes: number;
  batchCalls: number;
  multipleAccounts: number;
  signatureStatuses: number;
}

/**
 * Decides whether a request (a JSON-RPC call or a PubSub upgrade) may go on: null when it may, else
 * the reason it is refused, for the 401 body.
 */
export type AccessGate = (request: http.IncomingMessage) => Promise<string | null>;

/** A chain logger that may also warn (pino's does). */
export type ListenerLogger = ChainLogger & { warn?: ChainLogger["info"] };

/** HTTP_LIMITS with a test's overrides. */
export function httpLimitsWith(overrides: Partial<HttpListenerLimits> = {}): HttpListenerLimits {
  return { ...HTTP_LIMITS, ...overrides };
}

/**
 * A `node:http` server with the listener bounds set: a slow head or body is cut (408), an idle
 * socket closed, a large head refused (431). Node checks the head and request deadlines only every
 * `connectionsCheckingInterval` (30 s by default), so that interval is shortened to match them.
 */
export function createBoundedHttpServer(
  limits: HttpListenerLimits,
  handler: http.RequestListener,
): http.Server {
  const server = http.createServer(nodeServerOptions(limits), handler);
  server.timeout = limits.idleTimeoutMs;
  server.on("clientError", (error, socket) => answerClientError(error, socket as Socket));
  return server;
}

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

// A batch's calls run synchronously up to their first await; past this much work in one go the
// batch yields, so that other clients' requests are answered meanwhile.
const BATCH_SLICE_MS = 5;

/**
 * Answers a raw HTTP body: one request or a batch of at most `maxBatch` calls (a larger batch gets
 * one error and none of its calls runs).
 */
export async function answerBody(
  methods: Map<string, RpcMethod>,
  body: string,
  maxBatch: number = RPC_LIMITS.batchCalls,
): Promise<unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return errorResponse(null, RPC_ERROR.parseError, "Parse error");
  }
  if (!Array.isArray(parsed)) return answerRequest(methods, parsed);
  if (parsed.length === 0) return errorResponse(null, RPC_ERROR.invalidRequest, "Invalid request");
  if (parsed.length > maxBatch) {
    return errorResponse(
      null,
      RPC_ERROR.invalidRequest,
      `Invalid request: a batch of ${parsed.length} calls exceeds the limit of ${maxBatch}`,
    );
  }
  const answers: Promise<JsonRpcResponse>[] = [];
  let sliceStart = performance.now();
  for (const request of parsed) {
    answers.push(answerRequest(methods, request));
    if (performance.now() - sliceStart > BATCH_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  return Promise.all(answers);
}

export interface RpcServer {
  /** Starts listening; resolves with the bound port. */
  listen(options: { host: string; port: number }): Promise<number>;
  close(): Promise<void>;
}

export interface RpcServerOptions extends Pick<RpcMethodOptions, "mode"> {
  /** Overrides of HTTP_LIMITS and RPC_LIMITS (tests shorten them). */
  limits?: { http?: Partial<HttpListenerLimits>; rpc?: Partial<RpcLimits> };
  /** Checks every JSON-RPC request before its body is read (production with API keys). */
  access?: AccessGate;
}

const JSON_TYPE = "application/json; charset=utf-8";

// `host:port` of a listening socket, as Agave names its RPC in getClusterNodes.
function socketAddressOf(address: AddressInfo | string | null): string | null {
  if (address === null || typeof address === "string") return null;
  return address.family === "IPv6"
    ? `[${address.address}]:${address.port}`
    : `${address.address}:${address.port}`;
}

function sendJson(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/**
 * Creates (without listening) the HTTP server answering the JSON-RPC for `chain`. It is plain
 * `node:http`: one route, a body read as text (malformed JSON gets JSON-RPC's -32700 whatever its
 * content type), and no per-request framework work on the `sendTransaction` hot path.
 */
export function createRpcServer(chain: SandboxChain, options: RpcServerOptions = {}): RpcServer {
  const rpcLimits: RpcLimits = { ...RPC_LIMITS, ...options.limits?.rpc };
  // The address is read when asked: `server` listens only later.
  const rpcAddress = () => socketAddressOf(server.address());
  const methods = createRpcMethods(chain, { mode: options.mode, limits: rpcLimits, rpcAddress });
  const { access } = options;
  const serve = (request: http.IncomingMessage, response: http.ServerResponse) =>
    readBody(request, response, rpcLimits.bodyBytes, (body) => {
      answerBody(methods, body, rpcLimits.batchCalls).then(
        (answer) => sendJson(response, 200, JSON.stringify(answer)),
        () =>
          sendJson(
            response,
            500,
            JSON.stringify(errorResponse(null, RPC_ERROR.internalError, "Internal error")),
          ),
      );
    });
  const server = createBoundedHttpServer(httpLimitsWith(options.limits?.http), (request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0];
    if (path === "/" && request.method === "POST") {
      if (!access) return serve(request, response);
      const unauthorized = (reason: string) =>
        refuse(request, response, 401, errorResponse(null, RPC_UNAUTHORIZED, `unauthorized: ${reason}`));
      access(request).then(
        (refusal) => (refusal === null ? serve(request, response) : unauthorized(refusal)),
        () => unauthorized("the API key could not be checked"),
      );
      return;
    }
    if (path === "/health" && (request.method === "GET" || request.method === "HEAD")) {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": 2 });
      response.end(request.method === "HEAD" ? undefined : "ok");
      return;
    }
    if (path === "/") {
      response.setHeader("allow", "POST");
      return refuse(request, response, 405, {
        code: "method_not_allowed",
        msg: `JSON-RPC takes POST /, not ${request.method}`,
      });
    }
    refuse(request, response, 404, {
      code: "not_found",
      msg: "no such path: JSON-RPC is POST /, and GET /health answers load balancers",
    });
  });
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
        // A request still in flight leaves its keep-alive connection idle once answered, and close()
        // would wait out the keep-alive timeout for it: such connections are ended as they go idle.
        const sweep = setInterval(() => server.closeIdleConnections(), 20);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

// Reads the whole body as UTF-8 text, refusing one larger than `limit` bytes with 413.
function readBody(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  limit: number,
  onBody: (body: string) => void,
): void {
  if (Number(request.headers["content-length"]) > limit) {
    refuseTooLarge(request, response, limit);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  request.on("data", (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size <= limit) {
      chunks.push(chunk);
      return;
    }
    refused = true;
    chunks.length = 0;
    refuseTooLarge(request, response, limit);
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

function refuseTooLarge(request: http.IncomingMessage, response: http.ServerResponse, limit: number): void {
  refuse(
    request,
    response,
    413,
    errorResponse(null, RPC_ERROR.invalidRequest, `Invalid request: the body exceeds ${limit} bytes`),
  );
}

// After a refusal the rest of a body is read and dropped for a moment (a client still sending would
// otherwise get a reset before it reads the answer), up to these bounds; then the socket is cut.
const LINGER_MS = 1_000;
const LINGER_BYTES = 1024 * 1024;

/** Answers `status` with a JSON body and closes the connection without reading the rest of the body. */
function refuse(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  status: number,
  body: unknown,
): void {
  if (response.headersSent) return;
  response.setHeader("connection", "close");
  sendJson(response, status, JSON.stringify(body));
  if (request.complete) return;
  const cut = () => request.socket.destroy();
  const timer = setTimeout(cut, LINGER_MS).unref();
  let dropped = 0;
  request.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) cut();
  });
  request.once("close", () => clearTimeout(timer));
  request.resume();
}
