/**
 * The sandbox trade ticket: buy or sell yes/no contracts of one market with the TEST WALLET. It sizes
 * a buy from the order book (the USDC that takes N contracts up the asks), quotes it with `/order`
 * (price, slippage, price impact, fees), then signs, sends and follows the order to its fill.
 */
import { useEffect, useState } from "preact/hooks";
import { type Market, type OrderBook, USDC_MINT, units } from "../api";
import { costOf, ladder } from "../book";
import { link } from "../router";
import { execute, loadWallet, type OrderQuote, quote, wallet } from "./wallet";

type Side = "yes" | "no";
type Action = "buy" | "sell";
const CONTRACT = 1_000_000n;

/** The ticket of `market`, priced from `book`. */
export function Ticket({ market, book }: { market: Market; book: OrderBook | null }) {
  const [side, setSide] = useState<Side>("yes");
  const [action, setAction] = useState<Action>("buy");
  const [contracts, setContracts] = useState(2);
  const [slippageBps, setSlippageBps] = useState(50);
  const [offer, setOffer] = useState<OrderQuote | null>(null);
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
      setOffer(await getQuote());
    });

  const onSend = () =>
    run(async () => {
      // A fresh firm quote: the one on screen may be past its blockhash.
      const order = await getQuote();
      setOffer(order);
      const result = await execute(order, (step) => setStatus(`Order ${step}…`));
      const fill = result.fills?.[0];
      const reverted = (result.reverts ?? []).reduce((sum, revert) => sum + BigInt(revert.amount), 0n);
      if (result.status !== "closed" || !fill) {
        setStatus(`Order ${result.status}${reverted ? `, ${units(reverted)} returned` : ""}`);
        return;
      }
      setStatus(
        action === "buy"
          ? `Filled: bought ${units(fill.outAmount)} ${side.toUpperCase()} for ${units(fill.inAmount)} USDC${reverted ? ` (${units(reverted)} USDC returned)` : ""}`
          : `Filled: sold ${units(fill.inAmount)} ${side.toUpperCase()} for ${units(fill.outAmount)} USDC`,
      );
    });

  const inUnits = offer ? BigInt(offer.inAmount) : 0n;
  const outUnits = offer ? BigInt(offer.outAmount) : 0n;
  const perContract =
    offer && (action === "buy" ? outUnits : inUnits) > 0n
      ? Number(action === "buy" ? inUnits : outUnits) / Number(action === "buy" ? outUnits : inUnits)
      : null;

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
                  setContracts(Math.max(1, Math.floor(Number((event.target as HTMLInputElement).value) || 1)))
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
          {offer && (
            <dl class="quote" data-testid="quote">
              <dt>{action === "buy" ? "You pay" : "You sell"}</dt>
              <dd>
                {units(offer.inAmount)} {action === "buy" ? "USDC" : side.toUpperCase()}
              </dd>
              <dt>{action === "buy" ? "You get" : "You receive"}</dt>
              <dd>
                {units(offer.outAmount)} {action === "buy" ? side.toUpperCase() : "USDC"}
              </dd>
              <dt>Price</dt>
              <dd>{perContract === null ? "—" : `${(perContract * 100).toFixed(2)}¢ per contract`}</dd>
              <dt>Slippage</dt>
              <dd>
                {offer.slippageBps} bps (at least {units(offer.otherAmountThreshold)})
              </dd>
              <dt>Price impact</dt>
              <dd>{(Number(offer.priceImpactPct) * 100).toFixed(2)}%</dd>
              <dt>Fees</dt>
              <dd>
                {offer.platformFee
                  ? `${units(offer.platformFee.amount)} (${offer.platformFee.feeBps} bps)`
                  : "none"}
              </dd>
            </dl>
          )}
          <div class="row">
            <button type="submit" disabled={busy || !tradable}>
              Quote
            </button>
            <button type="button" class="primary" disabled={busy || !tradable} onClick={() => void onSend()}>
              {action === "buy" ? "Buy" : "Sell"} {contracts} {side.toUpperCase()}
            </button>
          </div>
          {!tradable && <p class="muted small">This market is {market.status}: nothing to trade.</p>}
        </form>
      )}
      <p class="status" role="status" aria-live="polite" data-testid="order-status">
        {status}
      </p>
    </section>
  );
}
