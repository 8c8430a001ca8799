/**
 * The TEST WALLET and its portfolio: SOL and USDC balances, airdrop and faucet buttons, every outcome
 * token mapped to its market with its average cost (from the wallet's own fills, history.ts), its value
 * at the current bid (or at 1 and 0 USDC once settled) and its P&L, a redeem button for winnings, and
 * the history of every fill: bought, sold, redeemed, with the SOL each took.
 */
import { useEffect, useState } from "preact/hooks";
import { getJson, type Market, type OrderBook, USDC_MINT, units } from "../api";
import { dateTime, price } from "../format";
import { link } from "../router";
import { solText } from "./costs";
import {
  averageCost,
  backfill,
  CONTRACT,
  fillsOf,
  forgetHistory,
  historyVersion,
  ledgerOf,
  priceUnits,
  signedUsdc,
  worthOf,
} from "./history";
import "./sandbox.css";
import {
  airdrop,
  balances,
  balancesVersion,
  createWallet,
  faucet,
  forgetWallet,
  type Holding,
  loadWallet,
  redeem,
  wallet,
} from "./wallet";

interface Position {
  holding: Holding;
  market: Market | null;
  side: "yes" | "no" | null;
  /** The best bid of its side in the market's order book now (dollars), or null when none. */
  bid: string | null;
}

/** The best bid of `side` in the live order book of `ticker`, or null when the book has none. */
async function bestBid(ticker: string, side: "yes" | "no"): Promise<string | null> {
  try {
    const book = await getJson<OrderBook>(`/api/v1/orderbook/${encodeURIComponent(ticker)}`);
    const prices = Object.keys(side === "yes" ? book.yes_bids : book.no_bids);
    return prices.length === 0
      ? null
      : prices.reduce((best, price) => (Number(price) > Number(best) ? price : best));
  } catch {
    return null;
  }
}

const markets = new Map<string, Promise<Market | null>>();
/** The market of an outcome mint (null for other tokens), asked once per mint. */
function marketOf(mint: string): Promise<Market | null> {
  let found = markets.get(mint);
  if (!found) {
    found = getJson<Market>(`/api/v1/market/by-mint/${mint}`).catch(() => null);
    markets.set(mint, found);
  }
  return found;
}

function sideOf(market: Market | null, mint: string): "yes" | "no" | null {
  for (const account of Object.values(market?.accounts ?? {})) {
    if (account.yesMint === mint) return "yes";
    if (account.noMint === mint) return "no";
  }
  return null;
}

/** Whether `position` pays out now: its market determined with its side as the result, redemption open. */
function redeemable(position: Position): boolean {
  const market = position.market;
  if (!market || !position.side) return false;
  const account = Object.values(market.accounts).find(
    (a) => a.yesMint === position.holding.mint || a.noMint === position.holding.mint,
  );
  return (
    (market.status === "determined" || market.status === "finalized") &&
    market.result === position.side &&
    account?.redemptionStatus === "open"
  );
}

/** The wallet page. */
export function WalletView() {
  const [lamports, setLamports] = useState<bigint | null>(null);
  const [positions, setPositions] = useState<Position[]>([]);
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    void loadWallet();
  }, []);

  const version = balancesVersion.value;
  const address = wallet.value?.address;
  useEffect(() => {
    if (!address) return;
    let stopped = false;
    void backfill(address, async (ticker) => {
      const market = await getJson<Market>(`/api/v1/market/${encodeURIComponent(ticker)}`).catch(() => null);
      return market?.status === "determined" || market?.status === "finalized";
    });
    const load = async () => {
      try {
        const read = await balances();
        const mapped = await Promise.all(
          read.holdings.map(async (holding) => {
            const market = holding.program === "token-2022" ? await marketOf(holding.mint) : null;
            const side = sideOf(market, holding.mint);
            const live = market?.status === "active" && side !== null && holding.amount > 0n;
            const bid = live ? await bestBid(market.ticker, side) : null;
            return { holding, market, side, bid };
          }),
        );
        if (stopped) return;
        setLamports(read.lamports);
        setPositions(mapped);
      } catch (error) {
        if (!stopped) setStatus(`Error: ${(error as Error).message}`);
      }
    };
    void load();
    // Markets move and get determined while the page is open.
    const timer = setInterval(() => {
      markets.clear();
      void load();
    }, 5_000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [address, version]);

  const run = (label: string, task: () => Promise<void>) => async () => {
    setBusy(true);
    setStatus(`${label}…`);
    try {
      await task();
      setStatus(`${label}: done`);
    } catch (error) {
      setStatus(`${label} failed: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const redeemPosition = (position: Position) =>
    run(`Redeeming ${position.market?.ticker}`, async () => {
      await redeem(
        {
          ticker: position.market?.ticker ?? "",
          side: position.side ?? "yes",
          mint: position.holding.mint,
        },
        position.holding.amount,
        (step) => setStatus(`Redeem ${step}…`),
      );
      markets.delete(position.holding.mint);
    });

  const usdc = positions.find((position) => position.holding.mint === USDC_MINT)?.holding.amount ?? 0n;
  const outcomes = positions.filter((position) => position.market && position.holding.amount > 0n);
  historyVersion.value;
  const fills = fillsOf(address ?? null);

  return (
    <section aria-labelledby="wallet-title">
      <h1 id="wallet-title">Test wallet</h1>
      <p class="test-banner" role="note">
        TEST WALLET — a key made in this browser and kept in its local storage, for the sandbox chain only.
        Never send real funds to it.
      </p>
      {!wallet.value ? (
        <button type="button" class="primary" onClick={() => void createWallet()}>
          Make a test wallet
        </button>
      ) : (
        <>
          <div class="card">
            <p class="mono addr" data-testid="wallet-address">
              {wallet.value.address}
            </p>
            <dl class="balances">
              <dt>SOL</dt>
              <dd data-testid="sol-balance">{lamports === null ? "…" : units(lamports, 9)}</dd>
              <dt>USDC</dt>
              <dd data-testid="usdc-balance" data-amount={usdc.toString()}>
                {units(usdc)}
              </dd>
            </dl>
            <div class="row">
              <button type="button" disabled={busy} onClick={run("Airdrop of 1 SOL", () => airdrop())}>
                Airdrop 1 SOL
              </button>
              <button type="button" disabled={busy} onClick={run("Faucet of 100 USDC", () => faucet())}>
                Faucet 100 USDC
              </button>
              <a class="button-link" href={link("/swap")}>
                Swap tokens
              </a>
              <button
                type="button"
                class="danger"
                disabled={busy}
                onClick={() => {
                  if (
                    confirm("Forget this test wallet? Its tokens stay on the sandbox chain, out of reach.")
                  ) {
                    if (address) forgetHistory(address);
                    forgetWallet();
                  }
                }}
              >
                Forget wallet
              </button>
            </div>
            <p class="status" role="status" aria-live="polite" data-testid="wallet-status">
              {status}
            </p>
          </div>
          <section class="card" aria-labelledby="positions-title">
            <h2 id="positions-title">Positions</h2>
            <div class="table-wrap">
              <table data-testid="positions">
                <thead>
                  <tr>
                    <th scope="col">Market</th>
                    <th scope="col">Side</th>
                    <th scope="col" class="num">
                      Contracts
                    </th>
                    <th scope="col" class="num">
                      Avg cost
                    </th>
                    <th scope="col" class="num opt">
                      Bid
                    </th>
                    <th scope="col" class="num">
                      Value
                    </th>
                    <th scope="col" class="num">
                      P&amp;L
                    </th>
                    <th scope="col" class="opt">
                      Status
                    </th>
                    <th scope="col" />
                  </tr>
                </thead>
                <tbody>
                  {outcomes.map((position) => {
                    const market = position.market as Market;
                    const bid = position.bid;
                    const held = position.holding.amount;
                    const pays = redeemable(position);
                    const settled = market.status === "determined" || market.status === "finalized";
                    // Value at the current price: the bid while it trades, 1 or 0 USDC once settled.
                    const unit = settled
                      ? market.result === position.side
                        ? CONTRACT
                        : 0n
                      : bid === null
                        ? null
                        : priceUnits(bid);
                    const value = unit === null ? null : worthOf(held, unit);
                    const ledger = ledgerOf(fills, position.holding.mint);
                    // Cost and P&L only where this browser recorded every contract held.
                    const tracked = ledger.held === held;
                    const average = tracked ? averageCost(ledger.cost, held) : null;
                    const pnl = tracked && value !== null ? value - ledger.cost : null;
                    return (
                      <tr
                        key={position.holding.mint}
                        data-testid="position"
                        data-ticker={market.ticker}
                        data-side={position.side ?? ""}
                        data-contracts={String(Number(held) / 1e6)}
                        data-cost={tracked ? ledger.cost.toString() : undefined}
                        data-value={value?.toString()}
                        data-pnl={pnl?.toString()}
                      >
                        <td>
                          <a href={link(`/market/${market.ticker}`)}>{market.yesSubTitle || market.title}</a>
                          <div class="muted small">{market.ticker}</div>
                        </td>
                        <td>{position.side}</td>
                        <td class="num">{units(held)}</td>
                        <td class="num" data-testid="average-cost">
                          {average === null ? "—" : price(average)}
                        </td>
                        <td class="num opt">{price(bid)}</td>
                        <td class="num">{value === null ? "—" : `${units(value)} USDC`}</td>
                        <td class={`num ${pnl === null ? "" : pnl >= 0n ? "up" : "down"}`}>
                          {pnl === null ? "—" : signedUsdc(pnl)}
                        </td>
                        <td class="opt">
                          {market.status}
                          {market.result ? ` (${market.result})` : ""}
                        </td>
                        <td>
                          {pays && (
                            <button
                              type="button"
                              class="primary"
                              disabled={busy}
                              onClick={redeemPosition(position)}
                            >
                              Redeem
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                  {outcomes.length === 0 && (
                    <tr>
                      <td colSpan={9} class="muted">
                        {fills.length > 0 ? "No open positions" : "No outcome tokens yet"}:{" "}
                        <a href={link("/")}>pick a market</a> and buy some.
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
            {outcomes.some((position) => !ledgerTracks(fills, position.holding)) && (
              <p class="muted small">
                "—" under average cost: contracts this browser has no fills for (bought elsewhere).
              </p>
            )}
          </section>
          <Closed fills={fills} held={positions.map((position) => position.holding)} />
          <History fills={fills} />
        </>
      )}
    </section>
  );
}

function ledgerTracks(fills: ReturnType<typeof fillsOf>, holding: Holding): boolean {
  return ledgerOf(fills, holding.mint).held === holding.amount;
}

/** Every fill of this wallet, newest first, with what it paid or received and the SOL it took. */
function History({ fills }: { fills: ReturnType<typeof fillsOf> }) {
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <div class="table-wrap">
        <table data-testid="history">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Market</th>
              <th scope="col">What</th>
              <th scope="col" class="num">
                Contracts
              </th>
              <th scope="col" class="num">
                USDC
              </th>
              <th scope="col" class="num opt">
                Price
              </th>
              <th scope="col" class="num opt">
                SOL
              </th>
            </tr>
          </thead>
          <tbody>
            {[...fills].reverse().map((fill) => {
              const paid = fill.kind === "buy";
              const usdc = BigInt(fill.usdc);
              return (
                <tr
                  key={fill.signature}
                  data-testid="history-row"
                  data-kind={fill.kind}
                  data-ticker={fill.ticker}
                  data-signature={fill.signature}
                >
                  <td>{dateTime(fill.time)}</td>
                  <td>
                    <a href={link(`/market/${fill.ticker}`)}>{fill.ticker}</a>
                  </td>
                  <td class="history-kind">
                    {fill.kind === "redeem" ? "redeemed" : fill.kind === "buy" ? "bought" : "sold"}{" "}
                    {fill.side.toUpperCase()}
                  </td>
                  <td class="num">{units(fill.contracts)}</td>
                  <td class={`num ${paid ? "down" : "up"}`}>{signedUsdc(paid ? -usdc : usdc)}</td>
                  <td class="num opt">{price(Number(fill.usdc) / Number(fill.contracts))}</td>
                  <td class="num opt">{fill.lamports === null ? "—" : solChange(BigInt(fill.lamports))}</td>
                </tr>
              );
            })}
            {fills.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  No fills yet in this browser.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A SOL cost as a signed change of the balance. */
function solChange(lamports: bigint): string {
  return lamports >= 0n ? `−${solText(lamports)}` : `+${solText(-lamports)}`;
}

/** Positions the wallet's fills opened and that it no longer holds: sold or redeemed, with their realized P&L. */
function Closed({ fills, held }: { fills: ReturnType<typeof fillsOf>; held: Holding[] }) {
  const mints = [...new Set(fills.map((fill) => fill.mint))].filter(
    (mint) => (held.find((holding) => holding.mint === mint)?.amount ?? 0n) === 0n,
  );
  const closed = mints
    .map((mint) => ({ mint, ledger: ledgerOf(fills, mint), first: fills.find((fill) => fill.mint === mint) }))
    .filter((entry) => entry.ledger.held === 0n && entry.first);
  if (closed.length === 0) return null;
  return (
    <section class="card" aria-labelledby="closed-title">
      <h2 id="closed-title">Settled and closed positions</h2>
      <div class="table-wrap">
        <table data-testid="closed-positions">
          <thead>
            <tr>
              <th scope="col">Market</th>
              <th scope="col" class="opt">
                Side
              </th>
              <th scope="col" class="num opt">
                Bought
              </th>
              <th scope="col" class="num">
                Avg cost
              </th>
              <th scope="col">Closed by</th>
              <th scope="col" class="num">
                Realized P&amp;L
              </th>
            </tr>
          </thead>
          <tbody>
            {closed.map(({ mint, ledger, first }) => {
              const bought = ledger.fills.filter((fill) => fill.kind === "buy");
              const paid = bought.reduce((sum, fill) => sum + BigInt(fill.usdc), 0n);
              const average = averageCost(paid, ledger.bought);
              return (
                <tr
                  key={mint}
                  data-testid="closed-position"
                  data-ticker={first?.ticker}
                  data-realized={ledger.realized.toString()}
                >
                  <td>
                    <a href={link(`/market/${first?.ticker}`)}>{first?.ticker}</a>
                  </td>
                  <td class="opt">{first?.side}</td>
                  <td class="num opt">{units(ledger.bought)}</td>
                  <td class="num">{average === null ? "—" : price(average)}</td>
                  <td>
                    {[
                      ledger.redeemed > 0n
                        ? `redeemed ${units(ledger.redeemed)} for ${units(ledger.redeemedFor)} USDC`
                        : "",
                      ledger.sold > 0n ? `sold ${units(ledger.sold)}` : "",
                    ]
                      .filter(Boolean)
                      .join(", ") || "settled worthless"}
                  </td>
                  <td class={`num ${ledger.realized >= 0n ? "up" : "down"}`}>
                    {signedUsdc(ledger.realized)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
