/**
 * The sandbox trade ticket: buy or sell yes/no contracts of one market with the TEST WALLET. It sizes
 * a buy from the order book (the USDC that takes N contracts up the asks), quotes it with `/order`,
 * and shows every cost of the transaction before it is signed: the USDC, the network and priority
 * fees, the rent of each account it creates, the deposit the venue's settlement draws its fee from,
 * and the total once settled (read from the transaction itself, see costs.ts). Buy signs the quote on
 * screen; a quote past its blockhash is renewed and signed only when it costs no more, else shown
 * for review. After the fill it shows what the wallet's balances actually lost. Beside it, the
 * wallet's position in this market (average cost, value, P&L), and Redeem once the market settled
 * its way.
 */
import { useEffect, useState } from "preact/hooks";
import { type Market, type OrderBook, USDC_MINT, units } from "../api";
import { costOf, ladder } from "../book";
import { price } from "../format";
import { link } from "../router";
import { type OrderCosts, orderCosts, solText } from "./costs";
import {
  averageCost,
  CONTRACT,
  fillsOf,
  historyVersion,
  ledgerOf,
  priceUnits,
  signedUsdc,
  worthOf,
} from "./history";
import "./sandbox.css";
import {
  balances,
  balancesVersion,
  loadWallet,
  type OrderQuote,
  type Paid,
  quote,
  redeem,
  rpc,
  tradeOutcome,
  wallet,
} from "./wallet";

type Side = "yes" | "no";
type Action = "buy" | "sell";

interface Offer {
  order: OrderQuote;
  costs: OrderCosts;
}

/** The ticket of `market`, priced from `book`. */
export function Ticket({ market, book }: { market: Market; book: OrderBook | null }) {
  const [side, setSide] = useState<Side>("yes");
  const [action, setAction] = useState<Action>("buy");
  const [contracts, setContracts] = useState(2);
  const [slippageBps, setSlippageBps] = useState(50);
  const [offer, setOffer] = useState<Offer | null>(null);
  const [paid, setPaid] = useState<Paid | null>(null);
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  const accounts = market.accounts[USDC_MINT];

  useEffect(() => {
    void loadWallet();
  }, []);
  useEffect(() => setOffer(null), [side, action, contracts, slippageBps]);

  if (!accounts) return null;
  const mint = side === "yes" ? accounts.yesMint : accounts.noMint;
  const tradable = market.status === "active";
  const about = { ticker: market.ticker, side, mint, kind: action };

  const getQuote = async (): Promise<OrderQuote> => {
    if (action === "sell") return quote(mint, USDC_MINT, BigInt(contracts) * CONTRACT, slippageBps);
    if (!book) throw new Error("the order book has not loaded yet");
    // The no side's asks are the yes bids seen from the other side.
    const view = side === "yes" ? book : { yes_bids: book.no_bids, no_bids: book.yes_bids };
    let amount = costOf(ladder(view).asks, contracts);
    if (amount === null) throw new Error(`the book holds fewer than ${contracts} ${side} contracts`);
    let offered = await quote(USDC_MINT, mint, amount, slippageBps);
    // The book moved since it was drawn: pay up to what N contracts cost now.
    if (BigInt(offered.outAmount) < BigInt(contracts) * CONTRACT && BigInt(offered.outAmount) > 0n) {
      amount = (amount * BigInt(contracts) * CONTRACT) / BigInt(offered.outAmount) + 1n;
      offered = await quote(USDC_MINT, mint, amount, slippageBps);
    }
    return offered;
  };

  /** A quote and what signing it costs. */
  const getOffer = async (): Promise<Offer> => {
    const order = await getQuote();
    if (!order.transaction || !wallet.value) throw new Error("the quote carries no transaction");
    const costs = await orderCosts(order.transaction, wallet.value.address, {
      output: action === "buy" ? side.toUpperCase() : "USDC",
      initCost: order.initPredictionMarketCost,
    });
    return { order, costs };
  };

  const run = async (task: () => Promise<void>) => {
    setBusy(true);
    try {
      await task();
    } catch (error) {
      setStatus(`Error: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const onQuote = () =>
    run(async () => {
      setStatus("");
      setPaid(null);
      setOffer(await getOffer());
    });

  const onSend = () =>
    run(async () => {
      setPaid(null);
      let chosen = offer;
      if (!chosen) {
        // Nothing reviewed yet: show the costs first; the next press signs them.
        setOffer(await getOffer());
        setStatus("Review the costs above, then press the button again to sign.");
        return;
      }
      const height = await rpc<number>("getBlockHeight", []);
      if (chosen.order.lastValidBlockHeight !== undefined && height > chosen.order.lastValidBlockHeight) {
        // Past its blockhash: a fresh one is signed only when it costs no more than the one reviewed.
        const fresh = await getOffer();
        setOffer(fresh);
        if (!noDearer(fresh, chosen)) {
          setStatus("The quote expired and the new one costs more: review it, then press again.");
          return;
        }
        chosen = fresh;
      }
      const result = await tradeOutcome(chosen.order, about, (step) => setStatus(`Order ${step}…`));
      const fill = result.status.fills?.[0];
      const reverted = (result.status.reverts ?? []).reduce((sum, revert) => sum + BigInt(revert.amount), 0n);
      setPaid(result.paid);
      if (result.status.status !== "closed" || !fill) {
        setStatus(`Order ${result.status.status}${reverted ? `, ${units(reverted)} returned` : ""}`);
        return;
      }
      setStatus(
        action === "buy"
          ? `Filled: bought ${units(fill.outAmount)} ${side.toUpperCase()} for ${units(fill.inAmount)} USDC${reverted ? ` (${units(reverted)} USDC returned)` : ""}`
          : `Filled: sold ${units(fill.inAmount)} ${side.toUpperCase()} for ${units(fill.outAmount)} USDC`,
      );
    });

  const order = offer?.order;
  const inUnits = order ? BigInt(order.inAmount) : 0n;
  const outUnits = order ? BigInt(order.outAmount) : 0n;
  const perContract =
    order && (action === "buy" ? outUnits : inUnits) > 0n
      ? Number(action === "buy" ? inUnits : outUnits) / Number(action === "buy" ? outUnits : inUnits)
      : null;
  const costs = offer?.costs;
  const upFront = costs?.lines
    .filter((line) => line.key !== "settlement")
    .reduce((sum, line) => sum + line.lamports, 0n);

  return (
    <section class="card ticket" aria-labelledby="ticket-title">
      <div class="card-head">
        <h2 id="ticket-title">Trade</h2>
        <span class="test-badge">TEST WALLET · sandbox</span>
      </div>
      {!wallet.value ? (
        <p>
          <a href={link("/wallet")}>Make a test wallet</a> to trade on the sandbox chain.
        </p>
      ) : (
        <>
          <MarketPosition market={market} book={book} busy={busy} run={run} setStatus={setStatus} />
          {tradable ? (
            <form
              onSubmit={(event) => {
                event.preventDefault();
                void onQuote();
              }}
            >
              <div class="row">
                <fieldset class="segmented" aria-label="Buy or sell">
                  {(["buy", "sell"] as const).map((value) => (
                    <button
                      type="button"
                      key={value}
                      aria-pressed={action === value}
                      onClick={() => setAction(value)}
                    >
                      {value}
                    </button>
                  ))}
                </fieldset>
                <fieldset class="segmented" aria-label="Side">
                  {(["yes", "no"] as const).map((value) => (
                    <button
                      type="button"
                      key={value}
                      aria-pressed={side === value}
                      onClick={() => setSide(value)}
                    >
                      {value}
                    </button>
                  ))}
                </fieldset>
              </div>
              <div class="row">
                <label>
                  <span>Contracts</span>
                  <input
                    type="number"
                    min="1"
                    max="100000"
                    step="1"
                    name="contracts"
                    value={contracts}
                    onInput={(event) =>
                      setContracts(
                        Math.max(1, Math.floor(Number((event.target as HTMLInputElement).value) || 1)),
                      )
                    }
                  />
                </label>
                <label>
                  <span>Slippage (bps)</span>
                  <input
                    type="number"
                    min="0"
                    max="10000"
                    value={slippageBps}
                    onInput={(event) => setSlippageBps(Number((event.target as HTMLInputElement).value) || 0)}
                  />
                </label>
              </div>
              {order && costs && (
                <dl
                  class="quote costs"
                  data-testid="quote"
                  data-usdc={action === "buy" ? costs.input.toString() : "0"}
                  data-lamports={costs.lamports.toString()}
                >
                  <dt>{action === "buy" ? "You pay" : "You sell"}</dt>
                  <dd>
                    {units(action === "buy" ? costs.input : order.inAmount)}{" "}
                    {action === "buy" ? "USDC" : side.toUpperCase()}
                  </dd>
                  <dt>{action === "buy" ? "You get" : "You receive"}</dt>
                  <dd>
                    {units(order.outAmount)} {action === "buy" ? side.toUpperCase() : "USDC"}
                  </dd>
                  <dt>Price</dt>
                  <dd>{perContract === null ? "—" : `${price(perContract)} per contract`}</dd>
                  <dt>Slippage</dt>
                  <dd>
                    {order.slippageBps} bps (at least {units(order.otherAmountThreshold)}
                    {action === "buy" ? ` ${side.toUpperCase()}` : " USDC"})
                  </dd>
                  <dt>Price impact</dt>
                  <dd>{(Number(order.priceImpactPct) * 100).toFixed(2)}%</dd>
                  <dt>Builder fee</dt>
                  <dd>
                    {order.platformFee
                      ? `${units(order.platformFee.amount)} USDC (${order.platformFee.feeBps} bps), in the price`
                      : "none on this venue"}
                  </dd>
                  <dt class="group">Fees and rent, in SOL</dt>
                  {costs.lines.map((line) => (
                    <>
                      <dt key={`${line.key}-dt-${line.label}`} data-cost={line.key}>
                        {line.label}
                      </dt>
                      <dd key={`${line.key}-dd-${line.label}`} data-lamports={line.lamports.toString()}>
                        {solText(line.lamports)} SOL
                        {line.returned ? <span class="muted"> · comes back</span> : ""}
                        <div class="muted small">{line.detail}</div>
                      </dd>
                    </>
                  ))}
                  <dt>SOL up front</dt>
                  <dd>{solText(upFront ?? 0n)} SOL</dd>
                  {costs.unknown.length > 0 && (
                    <>
                      <dt>Not itemized</dt>
                      <dd class="error">{costs.unknown.join("; ")}: their costs are not in the total</dd>
                    </>
                  )}
                  <dt class="total">Total once settled</dt>
                  <dd class="total" data-testid="quote-total">
                    {action === "buy" ? `${units(costs.input)} USDC + ` : ""}
                    {solText(costs.lamports)} SOL
                    {action === "buy" && (
                      <div class="muted small">
                        USDC the fill does not use comes back; you get at least{" "}
                        {units(order.otherAmountThreshold)} {side.toUpperCase()}
                      </div>
                    )}
                  </dd>
                </dl>
              )}
              <div class="row">
                <button type="submit" disabled={busy}>
                  Quote
                </button>
                <button type="button" class="primary" disabled={busy} onClick={() => void onSend()}>
                  {action === "buy" ? "Buy" : "Sell"} {contracts} {side.toUpperCase()}
                </button>
              </div>
            </form>
          ) : (
            <p class="muted small">This market is {market.status}: nothing to trade.</p>
          )}
          {paid && (
            <p
              class="small"
              data-testid="paid"
              data-lamports={paid.lamports.toString()}
              data-usdc={paid.usdc.toString()}
            >
              Read from the chain, the wallet's balances moved by {signedUsdc(-paid.usdc)} USDC and{" "}
              {paid.lamports >= 0n ? "−" : "+"}
              {solText(paid.lamports >= 0n ? paid.lamports : -paid.lamports)} SOL.
            </p>
          )}
        </>
      )}
      <p class="status" role="status" aria-live="polite" data-testid="order-status">
        {status}
      </p>
    </section>
  );
}

/** Whether `fresh` gives at least the contracts of `reviewed` for no more USDC and no more SOL. */
function noDearer(fresh: Offer, reviewed: Offer): boolean {
  return (
    BigInt(fresh.order.outAmount) >= BigInt(reviewed.order.outAmount) &&
    fresh.costs.input <= reviewed.costs.input &&
    fresh.costs.lamports <= reviewed.costs.lamports
  );
}

/** The best bid of each side, in USDC units per contract, from the live book. */
function bestBids(book: OrderBook | null, market: Market): { yes: bigint | null; no: bigint | null } {
  const best = (levels: Record<string, number> | undefined, fallback: string | null) => {
    const prices = Object.keys(levels ?? {}).map(Number);
    if (prices.length > 0) return priceUnits(Math.max(...prices));
    return fallback === null ? null : priceUnits(fallback);
  };
  return { yes: best(book?.yes_bids, market.yesBid), no: best(book?.no_bids, market.noBid) };
}

/**
 * The wallet's position in this market: contracts held (from the chain), average cost and P&L (from
 * its own fills), value at the best bid, or at 1 and 0 USDC once settled, and Redeem when it pays.
 */
function MarketPosition({
  market,
  book,
  busy,
  run,
  setStatus,
}: {
  market: Market;
  book: OrderBook | null;
  busy: boolean;
  run: (task: () => Promise<void>) => Promise<void>;
  setStatus: (text: string) => void;
}) {
  const [held, setHeld] = useState<Record<string, bigint> | null>(null);
  const account = market.accounts[USDC_MINT];
  const version = balancesVersion.value;
  const recorded = historyVersion.value;
  const address = wallet.value?.address ?? null;
  useEffect(() => {
    if (!address || !account) return;
    let stopped = false;
    balances().then(
      (read) => {
        if (stopped) return;
        const amounts: Record<string, bigint> = {};
        for (const holding of read.holdings) amounts[holding.mint] = holding.amount;
        setHeld(amounts);
      },
      () => {},
    );
    return () => {
      stopped = true;
    };
  }, [address, version, account]);
  if (!account || !held || !address) return null;
  const settled = market.status === "determined" || market.status === "finalized";
  const bids = bestBids(book, market);
  const fills = fillsOf(address);
  const rows = (["yes", "no"] as const)
    .map((side) => {
      const mint = side === "yes" ? account.yesMint : account.noMint;
      const ledger = ledgerOf(fills, mint);
      return { side, mint, amount: held[mint] ?? 0n, ledger };
    })
    .filter((row) => row.amount > 0n || row.ledger.fills.length > 0);
  if (rows.length === 0) return null;
  return (
    <div class="my-position" data-testid="market-position" data-history={recorded}>
      <h3>Your position</h3>
      {rows.map((row) => {
        const won = settled && market.result === row.side;
        const unit = settled ? (won ? CONTRACT : 0n) : row.side === "yes" ? bids.yes : bids.no;
        const value = unit === null ? null : worthOf(row.amount, unit);
        const tracked = row.ledger.held === row.amount;
        const average = tracked ? averageCost(row.ledger.cost, row.amount) : null;
        const pnl = value !== null && tracked ? value - row.ledger.cost : null;
        const pays = won && account.redemptionStatus === "open" && row.amount > 0n;
        if (row.amount === 0n)
          return (
            <div key={row.side} class="position-line" data-side={row.side} data-contracts="0">
              <p>
                <strong>{row.side.toUpperCase()}</strong> closed:
                {row.ledger.sold > 0n && <> sold {units(row.ledger.sold)}</>}
                {row.ledger.redeemed > 0n && (
                  <>
                    {" "}
                    redeemed {units(row.ledger.redeemed)} for {units(row.ledger.redeemedFor)} USDC
                  </>
                )}{" "}
                · realized P&amp;L{" "}
                <span class={row.ledger.realized >= 0n ? "up" : "down"} data-testid="realized">
                  {signedUsdc(row.ledger.realized)} USDC
                </span>
              </p>
            </div>
          );
        return (
          <div key={row.side} class="position-line" data-side={row.side} data-contracts={String(row.amount)}>
            <p>
              <strong>
                {units(row.amount)} {row.side.toUpperCase()}
              </strong>
              {average !== null && <> · average cost {price(average)}</>}
              {value !== null && (
                <>
                  {" "}
                  · worth {units(value)} USDC {settled ? `(settled ${market.result})` : "at the bid"}
                </>
              )}
              {pnl !== null && (
                <>
                  {" "}
                  · P&amp;L <span class={pnl >= 0n ? "up" : "down"}>{signedUsdc(pnl)} USDC</span>
                </>
              )}
              {row.ledger.redeemed > 0n && (
                <>
                  {" "}
                  · redeemed {units(row.ledger.redeemed)} for {units(row.ledger.redeemedFor)} USDC, P&amp;L{" "}
                  {signedUsdc(row.ledger.realized)} USDC
                </>
              )}
            </p>
            {!tracked && row.amount > 0n && (
              <p class="muted small">Bought outside this browser: no fills recorded here for its cost.</p>
            )}
            {pays && (
              <button
                type="button"
                class="primary"
                disabled={busy}
                onClick={() =>
                  void run(async () => {
                    const result = await redeem(
                      { ticker: market.ticker, side: row.side, mint: row.mint },
                      row.amount,
                      (step) => setStatus(`Redeem ${step}…`),
                    );
                    const fill = result.status.fills?.[0];
                    setStatus(
                      `Redeemed ${units(row.amount)} ${row.side.toUpperCase()} for ${units(fill?.outAmount ?? 0)} USDC`,
                    );
                  })
                }
              >
                Redeem {units(row.amount)} {row.side.toUpperCase()} for {units(worthOf(row.amount, CONTRACT))}{" "}
                USDC
              </button>
            )}
            {settled && !won && row.amount > 0n && (
              <p class="muted small">The market settled {market.result}: these contracts pay nothing.</p>
            )}
            {won && !pays && row.amount > 0n && (
              <p class="muted small">Redemption opens once the venue has the result on chain.</p>
            )}
          </div>
        );
      })}
    </div>
  );
}
