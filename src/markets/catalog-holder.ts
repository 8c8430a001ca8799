/** Holds the current catalog and keeps it in step with storage. */
import type { Kysely } from "kysely";
import type { Tables } from "../storage/database.js";
import { type Catalog, CatalogBuilder } from "./catalog.js";
import { readCatalogue, readCatalogVersion } from "./store.js";

/** Asked for the catalog before its first load finished. */
export class CatalogNotReadyError extends Error {
  override name = "CatalogNotReadyError";

  constructor() {
    super("the market catalog is still loading; retry shortly");
  }
}

/**
 * After this many reloads of changed rows only, the next reads every row: a row written without its
 * version stamp (by an older release during a rolling upgrade, or by hand) is picked up by then.
 */
export const WHOLE_READ_EVERY = 10;

export class CatalogHolder {
  private catalog: Catalog | undefined;
  private loadsSinceWhole = 0;
  private readonly listeners: ((catalog: Catalog) => void)[] = [];

  /** `seed`: a catalog of the same storage built elsewhere, which the first load starts from. */
  constructor(private seed?: Catalog) {}

  /** The catalog, or undefined until the first load finishes. */
  get current(): Catalog | undefined {
    return this.catalog;
  }

  /** The catalog; throws CatalogNotReadyError while it is still loading. */
  require(): Catalog {
    if (!this.catalog) throw new CatalogNotReadyError();
    return this.catalog;
  }

  replace(catalog: Catalog): void {
    this.catalog = catalog;
    for (const listener of this.listeners) listener(catalog);
  }

  onReplace(listener: (catalog: Catalog) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the catalogue from storage and swaps it in: after the first load, only the markets written
   * since the catalog held (at 250,000 markets a whole read is 400 MB of row text for a sync that
   * changed a few hundred), unless storage no longer adds up to it; every row again after
   * WHOLE_READ_EVERY such reloads.
   */
  async load(db: Kysely<Tables>): Promise<Catalog> {
    const previous = this.catalog ?? this.seed;
    this.seed = undefined;
    const changesOnly = previous !== undefined && this.loadsSinceWhole < WHOLE_READ_EVERY;
    let catalog = changesOnly ? await readChanges(db, previous) : undefined;
    this.loadsSinceWhole += 1;
    if (!catalog) {
      catalog = await readWhole(db, previous);
      this.loadsSinceWhole = 0;
    }
    this.replace(catalog);
    return catalog;
  }

  private refreshing: Promise<boolean> | undefined;

  /**
   * Reloads when another process (an import, a sync, another instance) committed a new version.
   * Calls made while a reload runs share it, so a slow load is never overtaken by an older one.
   */
  refreshIfChanged(db: Kysely<Tables>): Promise<boolean> {
    this.refreshing ??= (async () => {
      try {
        const version = await readCatalogVersion(db);
        if (this.catalog && version === this.catalog.version) return false;
        await this.load(db);
        return true;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}

/** Every market row, sharing the entries of unchanged markets with `previous`. */
async function readWhole(db: Kysely<Tables>, previous: Catalog | undefined): Promise<Catalog> {
  const builder = new CatalogBuilder(previous);
  return builder.build(await readCatalogue(db, (chunk) => builder.addMarkets(chunk)));
}

/**
 * The rows written since `previous` was read, over its other markets; undefined when storage does
 * not add up to that (its version went back, or it holds another number of markets: a replaced
 * database), for a whole read instead.
 */
async function readChanges(db: Kysely<Tables>, previous: Catalog): Promise<Catalog | undefined> {
  const builder = new CatalogBuilder(previous);
  const head = await readCatalogue(db, (chunk) => builder.addMarkets(chunk), {
    changedAfter: previous.version,
  });
  if (head.version < previous.version) return undefined;
  if ((await builder.addUnchanged()) !== head.marketCount) return undefined;
  return builder.build(head);
}
