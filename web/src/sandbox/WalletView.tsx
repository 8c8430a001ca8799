/**
 * The TEST WALLET and its portfolio: SOL and USDC balances, airdrop and faucet buttons, every outcome
 * token mapped to its market and valued at the current bid, and a redeem button for winnings.
 */
import { useEffect, useState } from "preact/hooks";
import { getJson, type Market, USDC_MINT, units } from "../api";
import { link } from "../router";
import {
  airdrop,
  balances,
  balancesVersion,
  createWallet,
  execute,
  faucet,
  forgetWallet,
  type Holding,
  loadWallet,
  quote,
  wallet,
} from "./wallet";

interface Position {
  holding: Holding;
  market: Market | null;
  side: "yes" | "no" | null;
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
    const load = async () => {
      try {
        const read = await balances();
        const mapped = await Promise.all(
          read.holdings.map(async (holding) => {
            const market = holding.program === "token-2022" ? await marketOf(holding.mint) : null;
            return { holding, market, side: sideOf(market, holding.mint) };
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

  const redeem = (position: Position) =>
    run(`Redeeming ${position.market?.ticker}`, async () => {
      const order = await quote(position.holding.mint, USDC_MINT, position.holding.amount);
      const result = await execute(order, (step) => setStatus(`Redeem ${step}…`));
      if (result.status !== "closed") throw new Error(`the redemption ended ${result.status}`);
      markets.delete(position.holding.mint);
    });

  const usdc = positions.find((position) => position.holding.mint === USDC_MINT)?.holding.amount ?? 0n;
  const outcomes = positions.filter((position) => position.market && position.holding.amount > 0n);

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
                  if (confirm("Forget this test wallet? Its tokens stay on the sandbox chain, out of reach."))
                    forgetWallet();
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
                    <th scope="col" class="num opt">
                      Bid
                    </th>
                    <th scope="col" class="num">
                      Value
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
                    const bid = position.side === "yes" ? market.yesBid : market.noBid;
                    const contracts = Number(position.holding.amount) / 1e6;
                    const pays = redeemable(position);
                    const value = pays ? contracts : bid === null ? null : contracts * Number(bid);
                    return (
                      <tr
                        key={position.holding.mint}
                        data-testid="position"
                        data-ticker={market.ticker}
                        data-side={position.side ?? ""}
                        data-contracts={String(contracts)}
                      >
                        <td>
                          <a href={link(`/market/${market.ticker}`)}>{market.yesSubTitle || market.title}</a>
                          <div class="muted small">{market.ticker}</div>
                        </td>
                        <td>{position.side}</td>
                        <td class="num">{contracts}</td>
                        <td class="num opt">{bid === null ? "—" : `${(Number(bid) * 100).toFixed(1)}¢`}</td>
                        <td class="num">{value === null ? "—" : `${value.toFixed(2)} USDC`}</td>
                        <td class="opt">
                          {market.status}
                          {market.result ? ` (${market.result})` : ""}
                        </td>
                        <td>
                          {pays && (
                            <button type="button" class="primary" disabled={busy} onClick={redeem(position)}>
                              Redeem
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                  {outcomes.length === 0 && (
                    <tr>
                      <td colSpan={7} class="muted">
                        No outcome tokens yet: <a href={link("/")}>pick a market</a> and buy some.
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
          </section>
        </>
      )}
    </section>
  );
}
