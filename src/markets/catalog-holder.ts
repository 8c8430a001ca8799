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

export class CatalogHolder {
  private catalog: Catalog | undefined;
  private readonly listeners: ((catalog: Catalog) => void)[] = [];

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

  /** Reads the whole catalogue from storage and swaps it in. */
  async load(db: Kysely<Tables>): Promise<Catalog> {
    const builder = new CatalogBuilder(this.catalog);
    const head = await readCatalogue(db, (chunk) => builder.addMarkets(chunk));
    const catalog = await builder.build(head);
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
