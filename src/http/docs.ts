/**
 * The API reference at `/docs/` (Scalar), self-hosted: its script comes from this server, never a
 * CDN, and it loads no outside fonts (the system's instead) and sends no telemetry. The script is
 * 3.4 MB; it goes out brotli- or gzip-compressed to a client that accepts it (about 0.8 MB with
 * brotli), compressed once per encoding on first demand, in the thread pool, and kept; the plain
 * file is streamed from disk. The first request of the page itself starts the work, so the script is
 * usually ready by the time the browser asks for it.
 *
 * The page is Scalar's own HTML (`getHtmlDocument` of @scalar/core, the helper its Fastify plugin
 * renders with) and the script is the one that plugin publishes; the plugin itself is not
 * registered: it reads the whole script into a string when registered (6.5 MB of heap for as long
 * as the process runs) and loads an OpenAPI parser for routes the page does not use.
 */
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { Negotiator } from "@fastify/accept-negotiator";
import { getHtmlDocument } from "@scalar/core/libs/html-rendering";
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

/**
 * The reference's browser script, as @scalar/fastify-api-reference publishes it (that package is
 * pinned with @scalar/core, whose page loads it).
 */
const SCRIPT_FILE = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@scalar/fastify-api-reference")),
  "js",
  "standalone.js",
);

export interface DocsSource {
  title: string;
  url: string;
}

/** Registers the reference page of `sources` (the OpenAPI documents) at `/docs/`. */
export async function registerDocs(app: FastifyInstance, sources: DocsSource[]): Promise<void> {
  const page = getHtmlDocument({
    // Relative: the page works behind a proxy that mounts it elsewhere.
    cdn: "js/scalar.js",
    _integration: "fastify",
    title: "Oddsgate API",
    pageTitle: "Oddsgate API reference",
    sources,
    // No fonts.scalar.com: the system's fonts. No telemetry, no hosted proxy or client.
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: true,
  });
  const hidden = { schema: { hide: true } };
  app.get(DOCS_PREFIX, hidden, async (request, reply) => {
    const query = request.url.indexOf("?");
    return reply.redirect(`${DOCS_PREFIX}/${query === -1 ? "" : request.url.slice(query)}`, 301);
  });
  app.get(`${DOCS_PREFIX}/`, hidden, async (request, reply) => {
    // The page is asked for: the script it loads next is made ready meanwhile.
    const encoding = negotiator.negotiate(String(request.headers["accept-encoding"] ?? ""));
    if (encoding) compressedScript(SCRIPT_FILE, encoding).catch(() => {});
    return reply.type("text/html; charset=utf-8").send(page);
  });
  app.get(SCRIPT_URL, hidden, async (request, reply) => {
    reply.type("application/javascript; charset=utf-8").header("vary", "accept-encoding");
    const accepted = request.headers["accept-encoding"];
    const encoding =
      typeof accepted === "string" && !wantsSignature(request) ? negotiator.negotiate(accepted) : null;
    if (encoding) {
      try {
        const body = await compressedScript(SCRIPT_FILE, encoding);
        return reply.header("content-encoding", encoding).send(body);
      } catch {
        // Compression failed: the plain file, as it is.
      }
    }
    return reply.send(createReadStream(SCRIPT_FILE));
  });
}
