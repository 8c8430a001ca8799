/**
 * The order test files start in. With vitest's cache of earlier durations (a local run after the
 * first), vitest's own order: longest first. Without it (CI's clean clone), vitest starts the largest
 * files first, and a short file that boots venues for a long time started last kept one worker busy
 * after the others were done; so the files that ran longest in a clean-clone run go first here.
 */
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

/** The longest files of a clean-clone CI run (2026-12-03), longest first. */
const LONGEST = [
  "test/explorer/budget.test.ts",
  "test/cli.test.ts",
  "test/explorer/money.test.ts",
  "test/security/rpc-fuzz.test.ts",
  "test/explorer/explorer.test.ts",
  "test/streams/market-scale-out.test.ts",
  "test/chain/lease.test.ts",
  "test/chain/fenced-instance.test.ts",
  "test/trading/pools.test.ts",
  "test/markets/ws.test.ts",
  "test/security/double-spend.test.ts",
  "test/explorer/swap.test.ts",
  "test/markets/onchain-trades.test.ts",
  "test/trading/quote-stream.test.ts",
  "test/storage/storage.test.ts",
  "test/markets/sync-lifecycle.test.ts",
  "test/trading/order-crash.test.ts",
  "test/explorer/docs.test.ts",
  "test/http/api-documents.test.ts",
  "test/chain/message-replay.test.ts",
  "test/markets/catalog-refresh.test.ts",
  "test/trading/market-init.test.ts",
  "test/markets/paging.test.ts",
  "test/upstream/sync.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const key = (file: TestSpecification) => `${file.project.name}:${relativeTo(root, file.moduleId)}`;
    if (sorted.every((file) => cache.getFileTestResults(key(file)))) return sorted;
    const rank = (file: TestSpecification) => {
      const at = LONGEST.indexOf(relativeTo(root, file.moduleId));
      return at < 0 ? LONGEST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

function relativeTo(root: string, file: string): string {
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}
