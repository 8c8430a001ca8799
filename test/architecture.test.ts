/**
 * The floor plan of src/ (design.md, Layout) as a test: dependency-cruiser reads every import with
 * the rules in .dependency-cruiser.cjs, which fail on a cycle, on a lower layer importing a higher
 * one, on the client importing anything but the contract, and on domain code throwing HTTP errors.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { cruise, type ICruiseResult, type IViolation } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, "..");
const config = require(path.join(ROOT, ".dependency-cruiser.cjs"));

/** The violations dependency-cruiser finds under `baseDir`'s src/, as "rule: from → to" lines. */
async function violations(baseDir: string): Promise<string[]> {
  const { output } = await cruise(["src"], {
    ...config.options,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
    baseDir,
  });
  const summary = (output as ICruiseResult).summary;
  return summary.violations.map(
    (violation: IViolation) =>
      `${violation.rule.name}: ${violation.from} → ${violation.to}${violation.cycle ? ` (cycle ${violation.cycle.map((step) => step.name).join(" → ")})` : ""}`,
  );
}

const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) fs.rmSync(dir, { recursive: true, force: true });
});

/** A throwaway tree of TypeScript files, for showing that a rule fires. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-floor-plan-"));
  fixtures.push(dir);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** The folders of docs/architecture.md's first table, in order, as layer names ("src/x/" → "x"). */
function documentedLayers(): string[][] {
  const doc = fs.readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
  const table = doc.slice(doc.indexOf("| Folder |"), doc.indexOf("\n\n", doc.indexOf("| Folder |")));
  return table
    .split("\n")
    .slice(2)
    .map((row) =>
      [...(row.split("|")[1] ?? "").matchAll(/`src\/([a-z-]+)(?:\/|\.ts)`/g)].map((m) => m[1] as string),
    );
}

describe("the floor plan of src/", () => {
  it("is the one docs/architecture.md describes", () => {
    expect(documentedLayers()).toEqual(config.layers);
  });

  it("has no cycle, no upward import, a client that speaks only the contract, no HTTP errors in domains", async () => {
    expect(await violations(ROOT)).toEqual([]);
  }, 60_000);

  it("catches each kind of breach", async () => {
    const found = await violations(
      tree({
        "src/contract/errors.ts": "export class ApiError extends Error {}\n",
        "src/client/trade.ts": 'import "../trading/book.js";\n',
        "src/trading/book.ts":
          'import { ApiError } from "../contract/errors.js";\nexport const e = ApiError;\n',
        "src/trading/routes/get-order.ts": 'import "../../contract/errors.js";\nimport "../book.js";\n',
        "src/markets/catalog.ts": 'import "../app/start-server.js";\n',
        "src/app/start-server.ts": 'import "../markets/catalog.js";\n',
        "src/chain/a.ts": 'import "./b.js";\n',
        "src/chain/sandbox/svm.ts": "export const svm = 1;\n",
        "src/trading/tx/build.ts": 'import "../../chain/sandbox/svm.js";\n',
        "src/chain/b.ts": 'import "./a.js";\n',
        "tsconfig.json": '{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext" } }\n',
      }),
    );
    const rules = new Set(found.map((line) => line.split(":")[0]));
    expect(rules).toEqual(
      new Set([
        "client-speaks-the-contract",
        "domain-errors-stay-in-the-domain",
        "layer-markets",
        "no-circular",
        "trading-uses-the-chain-interface",
      ]),
    );
    // A route may map a domain error to the catalogue.
    expect(found.some((line) => line.includes("routes/get-order.ts"))).toBe(false);
  }, 60_000);
});
