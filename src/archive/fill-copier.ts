/**
 * Copies the venue's own fills into the archive. They are stored durably with the order that settled
 * them (storage's `onchain_trades`), on whichever instance settled it; the leader copies the rows
 * after the last one archived, so every instance's fills reach the archive once. An instance that
 * becomes the leader goes on after the newest fill in the archive's files, so fills stored but not
 * yet archived when an instance died are copied too; an archive with no fills yet starts after the
 * newest fill stored at start-up (the archive begins when it is turned on).
 */
import type { Kysely } from "kysely";
import type { Tables } from "../storage/database.js";
import type { ArchiveRow, ArchiveSink } from "./tables.js";

/** Rows read per copy at most; a backlog is copied over several flush intervals. */
const BATCH = 5_000;

export interface FillCopierOptions {
  leading: () => boolean;
  /** The newest fill id in the archive's files, if any. */
  archivedUpTo: () => Promise<number | undefined>;
}

export class FillCopier {
  private cursor: number | undefined;
  private newestAtStart = 0;
  private led = false;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly sink: ArchiveSink,
    private readonly options: FillCopierOptions,
  ) {}

  /** Notes the newest fill stored now: where an archive without fills starts. */
  async start(): Promise<void> {
    const newest = await this.db
      .selectFrom("onchain_trades")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst();
    this.newestAtStart = Number(newest?.id ?? 0);
  }

  /** Copies the fills stored since the last copy (on the leader only). */
  async copy(): Promise<number> {
    const leading = this.options.leading();
    const gained = leading && !this.led;
    this.led = leading;
    if (!leading) return 0;
    if (gained) {
      // Whoever led until now (another instance, or this one before a restart) copied what the files hold.
      const archived = await this.options.archivedUpTo();
      this.cursor = Math.max(this.cursor ?? 0, archived ?? this.newestAtStart);
    }
    const rows = await this.db
      .selectFrom("onchain_trades")
      .selectAll()
      .where("id", ">", this.cursor ?? this.newestAtStart)
      .orderBy("id")
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return 0;
    this.sink.append(
      "fills",
      rows.map(
        (row): ArchiveRow<"fills"> => ({
          id: Number(row.id),
          ts: Number(row.created_at) * 1000,
          signature: row.transaction_signature,
          order_id: row.order_id,
          wallet: row.wallet,
          input_mint: row.input_mint,
          input_amount: Number(row.input_amount),
          output_mint: row.output_mint,
          output_amount: Number(row.output_amount),
          outcome_mint: row.outcome_mint,
          settlement_mint: row.settlement_mint,
          contracts: Number(row.contracts),
          notional: Number(row.notional),
          fee_amount: Number(row.fee_amount),
        }),
      ),
    );
    this.cursor = Number(rows[rows.length - 1]?.id);
    return rows.length;
  }
}
