/**
 * The recorded trade tape, read in order: newest first (GetTrades) or oldest first (candles), a block
 * of rows at a time. The reader sorts by one column, the time, and leaves trades of the same
 * millisecond in no particular order; so each block is cut at its last millisecond and that
 * millisecond is read whole, then everything handed out is ordered by (time, trade id) and a trade
 * recorded twice (a restarted recorder reads the tape again) is handed out once. A listing can thus
 * go on exactly after any trade: the cursor names its time and id.
 */
import type { ArchiveReader } from "../archive-reader.js";
import type { ArchiveRow } from "../tables.js";

export type TradeRow = ArchiveRow<"trades">;

/** Which trades: of one market or every one, created within [from, to) (Unix ms). */
export interface TapeWindow {
  ticker?: string | undefined;
  from?: number | undefined;
  to: number;
}

/** A position in the newest-first order: just after (older than) this trade. */
export interface TapePosition {
  ms: number;
  id: string;
}

/** Trades of one millisecond read at most: past this many the rest of that millisecond is lost. */
const MAX_TRADES_IN_ONE_MS = 10_000;

const newestFirst = (a: TradeRow, b: TradeRow) =>
  b.created_time - a.created_time || (a.trade_id < b.trade_id ? 1 : a.trade_id > b.trade_id ? -1 : 0);
const oldestFirst = (a: TradeRow, b: TradeRow) => newestFirst(b, a);

/** `rows` in `order`, each trade once. */
function ordered(rows: TradeRow[], order: (a: TradeRow, b: TradeRow) => number): TradeRow[] {
  rows.sort(order);
  return rows.filter(
    (row, i) =>
      i === 0 || row.trade_id !== rows[i - 1]?.trade_id || row.created_time !== rows[i - 1]?.created_time,
  );
}

function equalsOf(window: TapeWindow): { ticker?: string } {
  return window.ticker === undefined ? {} : { ticker: window.ticker };
}

/** Every trade of the window created in millisecond `ms`. */
function tradesAt(reader: ArchiveReader, window: TapeWindow, ms: number): Promise<TradeRow[]> {
  return reader.rows("trades", {
    from: ms,
    to: ms + 1,
    equals: equalsOf(window),
    limit: MAX_TRADES_IN_ONE_MS,
  });
}

/**
 * The window's trades newest first, after `after` when given, in groups of whole milliseconds (each
 * ordered, the groups in order); about `block` rows are read at a time. Stop reading when you have
 * enough: the rest is never read.
 */
export async function* tradesNewestFirst(
  reader: ArchiveReader,
  window: TapeWindow,
  block: number,
  after?: TapePosition,
): AsyncGenerator<TradeRow[]> {
  let to = window.to;
  if (after) {
    if (after.ms < to && (window.from === undefined || after.ms >= window.from)) {
      const tied = await tradesAt(reader, window, after.ms);
      yield ordered(
        tied.filter((row) => row.trade_id < after.id),
        newestFirst,
      );
    }
    to = Math.min(to, after.ms);
  }
  while (window.from === undefined || to > window.from) {
    const rows = await reader.rows("trades", {
      from: window.from,
      to,
      equals: equalsOf(window),
      orderBy: "created_time",
      descending: true,
      limit: block,
    });
    const last = rows.at(-1);
    if (rows.length < block || !last) {
      yield ordered(rows, newestFirst);
      return;
    }
    const boundary = last.created_time;
    const newer = rows.filter((row) => row.created_time > boundary);
    yield ordered([...newer, ...(await tradesAt(reader, window, boundary))], newestFirst);
    to = boundary;
  }
}

/** The window's trades oldest first, in groups of whole milliseconds, about `block` rows read at a time. */
export async function* tradesOldestFirst(
  reader: ArchiveReader,
  window: TapeWindow,
  block: number,
): AsyncGenerator<TradeRow[]> {
  let from = window.from;
  while (from === undefined || from < window.to) {
    const rows = await reader.rows("trades", {
      from,
      to: window.to,
      equals: equalsOf(window),
      orderBy: "created_time",
      limit: block,
    });
    const last = rows.at(-1);
    if (rows.length < block || !last) {
      yield ordered(rows, oldestFirst);
      return;
    }
    const boundary = last.created_time;
    const older = rows.filter((row) => row.created_time < boundary);
    yield ordered([...older, ...(await tradesAt(reader, window, boundary))], oldestFirst);
    from = boundary + 1;
  }
}

/** The newest trade of the window, or undefined when it has none. */
export async function newestTrade(reader: ArchiveReader, window: TapeWindow): Promise<TradeRow | undefined> {
  for await (const group of tradesNewestFirst(reader, window, 1)) {
    if (group.length > 0) return group[0];
  }
  return undefined;
}

/** Opaque cursors: base64url of `<ms>_<trade id>`; any string that is not one the replay wrote is refused. */
export function encodeCursor(position: TapePosition): string {
  return Buffer.from(`${position.ms}_${position.id}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): TapePosition | undefined {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^(\d{1,16})_([\s\S]{1,256})$/.exec(text);
  if (!match) return undefined;
  const position = { ms: Number(match[1]), id: match[2] as string };
  if (!Number.isSafeInteger(position.ms) || encodeCursor(position) !== cursor) return undefined;
  return position;
}
