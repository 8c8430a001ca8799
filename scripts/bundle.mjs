/**
 * Bundles the `oddsgate` command (src/cli/main.ts and everything it imports) into dist/cli/main.js,
 * over tsc's output of that one file. Node 20 spends about a second resolving and compiling the ~2,000
 * ES modules the server imports (kysely alone is hundreds of files); one bundled file halves that part
 * of start-up. tsc still emits the rest of dist/ (declarations, source maps for the modules).
 *
 * Left outside the bundle: native addons, and packages that find their own files at run time (pino's
 * transport workers, the API reference's browser script) or are imported only when configured.
 */
import { build } from "esbuild";

const EXTERNAL = [
  "better-sqlite3",
  "litesvm",
  "bufferutil",
  "utf-8-validate",
  "pino",
  "pino-pretty",
  "thread-stream",
  "@scalar/fastify-api-reference",
  "@fastify/swagger",
  "postgres",
  "ioredis",
];

await build({
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/cli/main.js",
  bundle: true,
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
