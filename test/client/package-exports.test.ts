/**
 * The typed clients reach users as `oddsgate/client` through package.json's `exports`. This imports
 * them by that name, as a user's code would: Node resolves a package's own name through its `exports`
 * (self-reference), so without the entry the import fails. It needs the build in dist/ (`npm run
 * build`; CI builds it at install).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const BUILT_CLIENT = path.resolve("dist/client/index.js");

describe("the package's oddsgate/client entry", () => {
  it("gives Node the built clients by the package's name", () => {
    expect(existsSync(BUILT_CLIENT), `${BUILT_CLIENT} is missing: run npm run build`).toBe(true);
    const script =
      'const client = await import("oddsgate/client"); console.log(JSON.stringify(Object.keys(client)));';
    const names = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        "MarketsClient",
        "OddsgateApiError",
        "TradeClient",
        "signOrderTransaction",
        "QuoteStreamClient",
        "BookStreamClient",
        "MarketStreamClient",
        "verifyResponse",
        "fetchSigningKey",
      ]),
    );
  });

  it("gives TypeScript the clients' declarations by the same name", () => {
    const user = path.resolve("user-code.ts");
    const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
    const { resolvedModule } = ts.resolveModuleName("oddsgate/client", user, options, ts.sys);
    expect(resolvedModule?.resolvedFileName).toBe(path.resolve("dist/client/index.d.ts"));
  });
});
