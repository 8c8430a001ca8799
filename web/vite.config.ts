/**
 * Builds the explorer into dist/web, which the server serves at `/` (src/http/explorer.ts). Hashed
 * file names under assets/ let the server cache them for a year; no inline script or style, so the
 * page runs under a content-security policy of 'self' only.
 */
import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const target = process.env.ODDSGATE_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // Inline assets would be data: URLs; the page keeps to files from its origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  // `npx vite web` serves the page with hot reload against a running venue.
  server: {
    proxy: Object.fromEntries(
      [
        "/api",
        "/order",
        "/order-status",
        "/tokens-with-decimals",
        "/dev",
        "/explorer",
        "/health-check",
        "/metrics",
      ].map((path) => [path, { target, ws: path === "/api" }]),
    ),
  },
});
