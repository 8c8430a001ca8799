/**
 * The API reference at `/docs/` (Scalar), self-hosted: its script comes from this server, never a
 * CDN, and it loads no outside fonts (the system's instead) and sends no telemetry. The script is
 * 3.4 MB; it goes out brotli- or gzip-compressed to a client that accepts it (about 0.8 MB with
 * brotli), compressed once per encoding on first demand, in the thread pool, and kept (the plain
 * file is streamed from disk as before). The first request of the page itself starts the work, so
 * the script is usually ready by the time the browser asks for it.
 */
import { createReadStream, type ReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { Negotiator } from "@fastify/accept-negotiator";
import scalarApiReference from "@scalar/fastify-api-reference";
import type { FastifyInstance } from "fastify";
import { wantsSignature } from "./response-signing.js";

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Where the page is; its script is at `${DOCS_PREFIX}/js/scalar.js`. */
export const DOCS_PREFIX = "/docs";
const SCRIPT_URL = `${DOCS_PREFIX}/js/scalar.js`;

type Encoding = "br" | "gzip";

/** Brotli at `quality` with a 16 MB window, for text. */
const brotliAt = (quality: number) => (body: Buffer) =>
  brotli(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });

/**
 * The script at once, then at its smallest: brotli quality 9 makes 0.83 MB in about 0.4 s of one pool
 * thread; quality 11 (0.75 MB) takes 7 s, so it is made afterwards, in the background, once per
 * process, and served from then on.
 */
const COMPRESS: Record<
  Encoding,
  { first: (body: Buffer) => Promise<Buffer>; best?: (body: Buffer) => Promise<Buffer> }
> = {
  br: { first: brotliAt(9), best: brotliAt(11) },
  gzip: { first: (body) => gzip(body, { level: 9 }) },
};

const negotiator = new Negotiator<Encoding>({ supportedValues: ["br", "gzip"] });

/** The script compressed, by file and encoding (one file per process: the package's). */
const compressed = new Map<string, Promise<Buffer>>();

function compressedScript(path: string, encoding: Encoding): Promise<Buffer> {
  const key = `${encoding}:${path}`;
  let body = compressed.get(key);
  if (!body) {
    const { first, best } = COMPRESS[encoding];
    const plain = readFile(path);
    body = plain.then(first);
    compressed.set(key, body);
    body
      .then(
        async () => {
          if (!best) return;
          const smaller = await best(await plain);
          compressed.set(key, Promise.resolve(smaller));
        },
        // A failure is not kept: the next request tries again (and this one gets the plain file).
        () => compressed.delete(key),
      )
      .catch(() => {});
  }
  return body;
}

/** The script's file on disk, as the plugin found it (learnt from its first answer). */
let scriptPath: string | undefined;

export interface DocsSource {
  title: string;
  url: string;
}

/** Registers the reference page of `sources` (the OpenAPI documents) at `/docs/`. */
export async function registerDocs(app: FastifyInstance, sources: DocsSource[]): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook("onSend", async (request, reply, payload) => {
      const url = request.url.split("?")[0];
      if (url === `${DOCS_PREFIX}/` && scriptPath) {
        // The page is asked for: the script it loads next is made ready meanwhile.
        const encoding = negotiator.negotiate(String(request.headers["accept-encoding"] ?? ""));
        if (encoding) compressedScript(scriptPath, encoding).catch(() => {});
      }
      if (url !== SCRIPT_URL || !isFileStream(payload)) return payload;
      scriptPath = String(payload.path);
      reply.header("vary", "accept-encoding");
      const accepted = request.headers["accept-encoding"];
      const encoding =
        typeof accepted === "string" && !wantsSignature(request) ? negotiator.negotiate(accepted) : null;
      if (!encoding) return payload;
      try {
        const body = await compressedScript(scriptPath, encoding);
        payload.destroy();
        reply.header("content-encoding", encoding).header("content-length", body.length);
        return body;
      } catch {
        // Compression failed: the plain file, as it is.
        return createReadStream(scriptPath);
      }
    });
    // Registered in this scope (the plugin adds its routes to the scope it is given), so the hook
    // above sees its answers and nothing else's.
    await scope.register(scalarApiReference, {
      routePrefix: DOCS_PREFIX,
      configuration: {
        title: "Oddsgate API",
        pageTitle: "Oddsgate API reference",
        sources,
        // No fonts.scalar.com: the system's fonts. No telemetry, no hosted proxy or client.
        withDefaultFonts: false,
        telemetry: false,
        hideClientButton: true,
      },
    });
  });
}

function isFileStream(payload: unknown): payload is ReadStream {
  return (
    typeof payload === "object" &&
    payload !== null &&
    "path" in payload &&
    typeof (payload as { pipe?: unknown }).pipe === "function"
  );
}
