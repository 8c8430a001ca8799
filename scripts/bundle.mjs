/**
 * Bundles the `oddsgate` command (src/cli/main.ts and everything it imports) into dist/cli/main.js,
 * over tsc's output of that one file, and a few chunks beside it. Node 20 spends about a second
 * resolving and compiling the ~2,000 ES modules the server imports (kysely alone is hundreds of
 * files); a handful of bundled files halve that part of start-up. tsc still emits the rest of dist/.
 *
 * Left outside the bundle: native addons, and packages that find their own files at run time (pino's
 * transport workers) or are imported only when configured. The API reference's browser script is
 * read from its package in node_modules (src/http/docs.ts), as the externals are.
 */
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const OUT_DIR = "dist/cli";

const EXTERNAL = [
  "better-sqlite3",
  "litesvm",
  "bufferutil",
  "utf-8-validate",
  "pino",
  "pino-pretty",
  "thread-stream",
  "@fastify/swagger",
  "pg",
  "ioredis",
  // Reads its .wasm file beside its own module.
  "@bokuweb/zstd-wasm",
  // A native addon, one prebuilt package per platform.
  "@duckdb/node-api",
];

const result = await build({
  metafile: true,
  entryPoints: ["src/cli/main.ts"],
  outdir: OUT_DIR,
  entryNames: "[name]",
  // Beside main.js, not below it: modules that find files relative to themselves (the explorer's
  // assets, ../../dist/web) sit at the same depth as in tsc's output.
  chunkNames: "chunk-[hash]",
  bundle: true,
  // Each command group is imported when its command runs: a chunk each, so `oddsgate keys list`
  // does not load the server.
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: EXTERNAL,
  sourcemap: "linked",
  logLevel: "warning",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "eof",
  // Bundled CommonJS packages call require() for Node's built-ins, which an ES module lacks.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);',
  },
});

// Chunks of earlier builds that this one no longer names (their names are content hashes), removed
// only once it succeeded: a failed build leaves the last working one whole, and a process loading
// chunks meanwhile still finds them.
const written = new Set(Object.keys(result.metafile.outputs).map((output) => path.resolve(output)));
for (const entry of fs.readdirSync(OUT_DIR, { withFileTypes: true })) {
  const file = path.resolve(OUT_DIR, entry.name);
  if (entry.isFile() && entry.name.startsWith("chunk-") && !written.has(file)) fs.rmSync(file);
}
