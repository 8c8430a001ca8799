/**
 * The explorer: the web app built by Vite from `web/` (into `dist/web`), served at `/`. Its assets
 * hold no data, so they are open without a key in every mode and never rate limited; everything they
 * fetch goes through the public APIs under the usual access rules (in development from the explorer's
 * own budget, see auth.ts). Hashed assets are cached for a year, `index.html` is
 * revalidated on every load, and every page carries a content-security policy that allows nothing but
 * this origin. `POST /explorer/rpc` relays a few JSON-RPC methods to the chain, so the page can read
 * balances, send its signed transactions and ask for airdrops from its own origin (the sandbox's
 * JSON-RPC listens on another port, which a browser may not call without CORS).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ApiError } from "../contract/errors.js";
import { sendReusedBody } from "./reused-bodies.js";
import { registerSimRelay, type SimulatorControls } from "./sim-relay.js";
import type { ZodApp } from "./types.js";

/** Where `npm run build` writes the web app, from the package root. */
export const EXPLORER_BUILD_DIR = fileURLToPath(new URL("../../dist/web/", import.meta.url));

/**
 * Only this origin: scripts, styles, fonts, images (charts draw on canvas; `data:` for icons) and
 * connections (its API calls and `/api/v1/ws`). No inline script or style markup, no framing.
 */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "no-cache";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** The JSON-RPC methods the page uses; the relay forwards no other. */
export const EXPLORER_RPC_METHODS = new Set([
  "getSlot",
  "getBlockHeight",
  "getBalance",
  "getMinimumBalanceForRentExemption",
  "getTokenAccountsByOwner",
  "getLatestBlockhash",
  "getSignatureStatuses",
  "sendTransaction",
  "requestAirdrop",
]);

/** The largest JSON-RPC request relayed: a signed transaction is at most 1232 bytes, base64 ~1.7 KiB. */
const RPC_BODY_BYTES = 16 * 1024;
const RPC_TIMEOUT_MS = 10_000;

const RpcCall = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string().max(64), z.number()]),
  method: z.string().max(64),
  params: z.array(z.unknown()).max(4).optional(),
});

export interface ExplorerOptions {
  /** EXPLORER: false registers nothing, so `/` answers 404. */
  enabled: boolean;
  /** The build output; EXPLORER_BUILD_DIR by default. */
  root?: string;
  /** The chain's JSON-RPC URL, for the relay; without it the relay is not offered. */
  rpcUrl?: string;
  mode: "development" | "production";
  /** Whether this listener offers the sandbox's faucet (development with the embedded chain). */
  sandbox: boolean;
  /** Symbols of the sandbox's own tokens by mint (the APIs give only mints and decimals). */
  tokenSymbols?: Readonly<Record<string, string>>;
  /** The embedded simulator's controls, for the page's simulator panel (development only). */
  simulator?: SimulatorControls;
}

interface Asset {
  body: Buffer;
  type: string;
  cache: string;
}

/** Registers the explorer's routes (nothing when disabled, or when the web app was not built). */
export function registerExplorer(app: ZodApp, options: ExplorerOptions): void {
  if (!options.enabled) return;
  const root = options.root ?? EXPLORER_BUILD_DIR;
  const index = join(root, "index.html");
  if (!existsSync(index)) {
    app.log.warn({ root }, "the explorer is not built (npm run build): / is not served");
    return;
  }
  const assets = loadAssets(root);
  // Never rate limited (auth.ts): a page's files are fetched at once, and hold no data.
  const page = {
    schema: { hide: true },
    config: { public: true, asset: true },
  } as const;
  const answer = (path: string) => async (_request: unknown, reply: import("fastify").FastifyReply) => {
    const asset = assets.get(path);
    if (!asset) throw new ApiError("not_found", `no route GET /${path}`);
    reply.header("cache-control", asset.cache);
    if (asset.type.startsWith("text/html")) {
      reply.header("content-security-policy", EXPLORER_CSP);
      reply.header("referrer-policy", "no-referrer");
    }
    return sendReusedBody(reply, asset.body, asset.type);
  };
  app.get("/", page, answer("index.html"));
  // What the page cannot find out from the APIs themselves: whether to offer the sandbox controls.
  const sandbox = options.sandbox && Boolean(options.rpcUrl);
  const simulator = options.mode === "development" ? options.simulator : undefined;
  const settings = JSON.stringify({
    mode: options.mode,
    sandbox,
    simulator: simulator !== undefined,
    ...(sandbox && options.tokenSymbols ? { tokens: options.tokenSymbols } : {}),
  });
  app.get("/explorer/config.json", page, async (_request, reply) =>
    reply.header("cache-control", REVALIDATE).type("application/json; charset=utf-8").send(settings),
  );
  // Each built file gets a route of its own: no path from a request ever reaches the file system.
  for (const path of assets.keys()) {
    if (path !== "index.html") app.get(`/${path}`, page, answer(path));
  }
  // Only the sandbox controls use the relay: a production chain stays behind its own listener's checks.
  if (sandbox && options.rpcUrl) registerRpcRelay(app, options.rpcUrl);
  if (simulator) registerSimRelay(app, simulator);
}

/** Every file of the build, by its path from the root (with `/`), read once at start. */
function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      // The build's own bookkeeping (web/build.mjs's stamp) is not part of the page.
      if (name.startsWith(".")) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const path = relative(root, full).split(sep).join("/");
        assets.set(path, {
          body: readFileSync(full),
          type: CONTENT_TYPES[extname(name)] ?? "application/octet-stream",
          // Vite names what it emits under assets/ by content hash: such a name never changes meaning.
          cache: path.startsWith("assets/") ? IMMUTABLE : REVALIDATE,
        });
      }
    }
  };
  walk(root);
  return assets;
}

/** `POST /explorer/rpc`: one JSON-RPC call of EXPLORER_RPC_METHODS, relayed to the chain with the caller's key. */
function registerRpcRelay(app: ZodApp, rpcUrl: string): void {
  app.post(
    "/explorer/rpc",
    {
      bodyLimit: RPC_BODY_BYTES,
      // No response schema: the chain's answer is passed on as it came.
      schema: { hide: true, body: RpcCall },
    },
    async (request, reply) => {
      const call = request.body;
      if (!EXPLORER_RPC_METHODS.has(call.method)) {
        throw new ApiError("bad_request", `the explorer relays only ${[...EXPLORER_RPC_METHODS].join(", ")}`);
      }
      const key = request.headers["x-api-key"];
      let answer: Response;
      try {
        answer = await fetch(rpcUrl, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(typeof key === "string" ? { "x-api-key": key } : {}),
          },
          body: JSON.stringify(call),
          signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
        });
      } catch (error) {
        request.log.warn({ err: error }, "the chain's JSON-RPC did not answer the explorer");
        throw new ApiError("upstream_unavailable", "the chain's JSON-RPC did not answer");
      }
      // JSON-RPC errors come back as they are (HTTP 200, or 401 for a missing key in production).
      return reply
        .code(answer.status)
        .type("application/json; charset=utf-8")
        .send(Buffer.from(await answer.arrayBuffer()));
    },
  );
}
