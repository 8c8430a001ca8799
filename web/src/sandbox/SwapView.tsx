/**
 * Token swaps with the TEST WALLET: pick two of the venue's tokens and an amount in UI units, quote it
 * with `/order` (out amount, minimum after slippage, price, price impact, route, fees), then sign, send
 * and follow it to the fill with the ticket's own order flow. The input token's faucet is one click away.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, USDC_MINT, units } from "../api";
import { link } from "../router";
import {
  defaultOutput,
  describe,
  label,
  loadTokens,
  matches,
  offered,
  type Parsed,
  parseAmount,
  ratio,
  type Token,
  WRAPPED_SOL_MINT,
} from "./tokens";
import {
  airdrop,
  balances,
  balancesVersion,
  execute,
  faucet,
  loadWallet,
  type OrderQuote,
  quote,
  wallet,
} from "./wallet";

/** Whole tokens the faucet button grants. */
const FAUCET_TOKENS = 100n;

/** An error as the page says it: the venue's `{code, msg}` as "msg (code)". */
function plain(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return (error as Error).message;
}

/** The swap page. */
export function SwapView() {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [inputMint, setInputMint] = useState(USDC_MINT);
  const [outputMint, setOutputMint] = useState("");
  const [amountText, setAmountText] = useState("");
  const [slippageBps, setSlippageBps] = useState(50);
  const [held, setHeld] = useState<Map<string, bigint> | null>(null);
  const [lamports, setLamports] = useState(0n);
  const [offer, setOffer] = useState<OrderQuote | null>(null);
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    void loadWallet();
    loadTokens().then(
      (list) => {
        setTokens(list);
        // A pair the venue routes (USDC to wSOL on the sandbox), not merely the next token listed.
        setOutputMint((current) => current || defaultOutput(list, USDC_MINT));
      },
      (error) => setStatus(`Error: the token list did not load: ${plain(error)}`),
    );
  }, []);

  const version = balancesVersion.value;
  const address = wallet.value?.address;
  useEffect(() => {
    if (!address) return;
    let stopped = false;
    balances().then(
      (read) => {
        if (stopped) return;
        setLamports(read.lamports);
        setHeld(new Map(read.holdings.map((holding) => [holding.mint, holding.amount])));
      },
      (error) => !stopped && setStatus(`Error: the balances did not load: ${plain(error)}`),
    );
    return () => {
      stopped = true;
    };
  }, [address, version]);

  useEffect(() => setOffer(null), [inputMint, outputMint, amountText, slippageBps]);

  const byMint = useMemo(() => new Map((tokens ?? []).map((token) => [token.mint, token])), [tokens]);
  const input = byMint.get(inputMint);
  const output = byMint.get(outputMint);
  /** What the wallet can pay of a token: wrapped SOL is wrapped from the native balance by the order. */
  const spendable = (token: Token | undefined): bigint | null => {
    if (!token || !held) return null;
    return token.mint === WRAPPED_SOL_MINT ? lamports : (held.get(token.mint) ?? 0n);
  };
  const inputBalance = spendable(input);
  const outputBalance = output && held ? (held.get(output.mint) ?? 0n) : null;

  const parsed: Parsed | null = input ? parseAmount(amountText, input.decimals, label(input)) : null;
  let problem = parsed && "error" in parsed ? parsed.error : "";
  if (
    !problem &&
    parsed &&
    "units" in parsed &&
    input &&
    inputBalance !== null &&
    parsed.units > inputBalance
  ) {
    problem = `That is more than your balance of ${units(inputBalance, input.decimals)} ${label(input)}.`;
  }
  if (!problem && inputMint === outputMint) problem = "Pick two different tokens.";
  const amount = parsed && "units" in parsed && !problem ? parsed.units : null;

  const run = async (task: () => Promise<void>) => {
    setBusy(true);
    try {
      await task();
    } catch (error) {
      setStatus(`Error: ${plain(error)}`);
    } finally {
      setBusy(false);
    }
  };

  const onQuote = () =>
    run(async () => {
      if (amount === null) return;
      setStatus("");
      setOffer(await quote(inputMint, outputMint, amount, slippageBps));
    });

  const onSwap = () =>
    run(async () => {
      if (amount === null || !input || !output) return;
      // A fresh firm quote: the one on screen may be past its blockhash or its pools' hold.
      const order = await quote(inputMint, outputMint, amount, slippageBps);
      const shown = offer;
      setOffer(order);
      if (shown && BigInt(order.outAmount) < BigInt(shown.otherAmountThreshold)) {
        setStatus(
          "The price moved past your slippage since the last quote: check the new quote and swap again.",
        );
        return;
      }
      const result = await execute(order, (step) => setStatus(`Swap ${step}…`));
      const fill = result.fills?.[0];
      if (result.status !== "closed" || !fill) {
        setStatus(`Swap ${result.status}`);
        return;
      }
      setStatus(
        `Swapped ${units(fill.inAmount, input.decimals)} ${label(input)} for ${units(fill.outAmount, output.decimals)} ${label(output)}`,
      );
    });

  const onFaucet = () =>
    run(async () => {
      if (!input) return;
      if (input.mint === WRAPPED_SOL_MINT) {
        setStatus("Airdrop of 1 SOL…");
        await airdrop();
        setStatus("Airdrop of 1 SOL: done");
      } else {
        setStatus(`Faucet of ${FAUCET_TOKENS} ${label(input)}…`);
        await faucet(input.mint, (FAUCET_TOKENS * 10n ** BigInt(input.decimals)).toString());
        setStatus(`Faucet of ${FAUCET_TOKENS} ${label(input)}: done`);
      }
    });

  const flip = () => {
    setInputMint(outputMint);
    setOutputMint(inputMint);
  };

  const picker = (name: string, title: string, value: string, onChange: (mint: string) => void) => (
    <TokenPicker name={name} title={title} tokens={tokens} value={value} onChange={onChange} />
  );

  return (
    <section aria-labelledby="swap-title">
      <h1 id="swap-title">Swap tokens</h1>
      <p class="test-banner" role="note">
        TEST WALLET — swaps on the sandbox chain only, with the key kept in this browser.
      </p>
      {!wallet.value ? (
        <p>
          <a href={link("/wallet")}>Make a test wallet</a> to swap on the sandbox chain.
        </p>
      ) : (
        <div class="swap-grid">
          <form
            class="card swap"
            onSubmit={(event) => {
              event.preventDefault();
              void onQuote();
            }}
          >
            <div class="swap-side">
              {picker("inputMint", "You pay", inputMint, setInputMint)}
              <label class="grow">
                <span>Amount{input ? ` (${label(input)})` : ""}</span>
                <input
                  name="amount"
                  inputMode="decimal"
                  autocomplete="off"
                  placeholder="0.0"
                  maxLength={48}
                  value={amountText}
                  aria-invalid={amountText !== "" && problem !== ""}
                  aria-describedby="swap-amount-help"
                  onInput={(event) => setAmountText((event.target as HTMLInputElement).value)}
                />
              </label>
            </div>
            <p class="muted small swap-meta">
              <span data-testid="swap-input-balance" data-amount={inputBalance?.toString() ?? ""}>
                Balance:{" "}
                {input && inputBalance !== null
                  ? `${units(inputBalance, input.decimals)} ${label(input)}`
                  : "…"}
              </span>
              {input && inputBalance !== null && inputBalance > 0n && (
                <button
                  type="button"
                  class="link"
                  onClick={() => setAmountText(units(inputBalance, input.decimals))}
                >
                  Max
                </button>
              )}
              {input && (
                <button type="button" disabled={busy} onClick={() => void onFaucet()}>
                  {input.mint === WRAPPED_SOL_MINT
                    ? "Airdrop 1 SOL"
                    : `Faucet ${FAUCET_TOKENS} ${label(input)}`}
                </button>
              )}
            </p>
            <p id="swap-amount-help" class="error small" role="alert" data-testid="swap-amount-error">
              {amountText !== "" ? problem : ""}
            </p>
            <button type="button" class="flip" onClick={flip} aria-label="Swap the two tokens">
              ⇅
            </button>
            <div class="swap-side">
              {picker("outputMint", "You receive", outputMint, setOutputMint)}
              <p class="muted small grow" data-testid="swap-output-balance">
                Balance:{" "}
                {output && outputBalance !== null
                  ? `${units(outputBalance, output.decimals)} ${label(output)}`
                  : "…"}
              </p>
            </div>
            <div class="row">
              <label>
                <span>Slippage (bps)</span>
                <input
                  type="number"
                  name="slippageBps"
                  min="0"
                  max="10000"
                  step="1"
                  value={slippageBps}
                  onInput={(event) => {
                    const value = Math.floor(Number((event.target as HTMLInputElement).value));
                    setSlippageBps(Number.isFinite(value) ? Math.min(10_000, Math.max(0, value)) : 0);
                  }}
                />
              </label>
            </div>
            {offer && input && output && (
              <QuoteDetails offer={offer} input={input} output={output} byMint={byMint} />
            )}
            <div class="row">
              <button type="submit" disabled={busy || amount === null}>
                Quote
              </button>
              <button
                type="button"
                class="primary"
                disabled={busy || amount === null}
                onClick={() => void onSwap()}
              >
                Swap
              </button>
            </div>
            <p class="status" role="status" aria-live="polite" data-testid="swap-status">
              {status}
            </p>
            <p class="muted small">
              Mints: <span class="mono addr">{inputMint}</span> →{" "}
              <span class="mono addr">{outputMint || "…"}</span>
            </p>
          </form>
          <Holdings
            tokens={tokens}
            held={held}
            lamports={lamports}
            onPick={(mint) => {
              setInputMint(mint);
              if (mint === outputMint) setOutputMint(inputMint);
            }}
          />
        </div>
      )}
    </section>
  );
}

/**
 * A token picker: a search box (symbol, name, or the start of a mint) over a list of the tokens it
 * finds. With no search it lists the named tokens only; Enter in the box picks the first one found.
 */
function TokenPicker({
  name,
  title,
  tokens,
  value,
  onChange,
}: {
  name: string;
  title: string;
  tokens: Token[] | null;
  value: string;
  onChange: (mint: string) => void;
}) {
  const [query, setQuery] = useState("");
  const shown = useMemo(() => offered(tokens ?? [], query, value), [tokens, query, value]);
  const found = query.trim() ? shown.filter((token) => matches(token, query)) : [];
  return (
    <div class="swap-token">
      <label htmlFor={`swap-${name}`}>
        <span>{title}</span>
      </label>
      <input
        type="search"
        class="token-search"
        name={`${name}Search`}
        placeholder="Search symbol or name"
        aria-label={name === "inputMint" ? "Find a token to pay with" : "Find a token to receive"}
        autocomplete="off"
        value={query}
        disabled={!tokens}
        onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
        onKeyDown={(event) => {
          if (event.key !== "Enter") return;
          event.preventDefault();
          const first = found[0] ?? shown[0];
          if (first) onChange(first.mint);
        }}
      />
      <select
        id={`swap-${name}`}
        name={name}
        value={value}
        onChange={(event) => onChange((event.target as HTMLSelectElement).value)}
        disabled={!tokens}
      >
        {shown.map((token) => (
          <option key={token.mint} value={token.mint} title={token.mint}>
            {describe(token)}
          </option>
        ))}
      </select>
      {query.trim() && (
        <span class="muted small" data-testid={`${name}-found`}>
          {found.length === 0 ? "No token matches." : `${found.length} found`}
        </span>
      )}
    </div>
  );
}

/** The wallet's SOL and spot tokens; picking one makes it the token paid. */
function Holdings({
  tokens,
  held,
  lamports,
  onPick,
}: {
  tokens: Token[] | null;
  held: Map<string, bigint> | null;
  lamports: bigint;
  onPick: (mint: string) => void;
}) {
  const rows = (tokens ?? []).filter((token) => (held?.get(token.mint) ?? 0n) > 0n);
  return (
    <section class="card" aria-labelledby="holdings-title">
      <h2 id="holdings-title">Balances</h2>
      <table class="holdings" data-testid="swap-holdings">
        <tbody>
          <tr>
            <th scope="row">SOL</th>
            <td class="num">{units(lamports, 9)}</td>
            <td>
              <button type="button" class="link" onClick={() => onPick(WRAPPED_SOL_MINT)}>
                Pay with
              </button>
            </td>
          </tr>
          {rows.map((token) => (
            <tr key={token.mint} data-mint={token.mint} data-amount={String(held?.get(token.mint) ?? 0n)}>
              <th scope="row" title={token.mint}>
                {label(token)}
              </th>
              <td class="num">{units(held?.get(token.mint) ?? 0n, token.decimals)}</td>
              <td>
                <button type="button" class="link" onClick={() => onPick(token.mint)}>
                  Pay with
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {held && rows.length === 0 && (
        <p class="muted small">No tokens yet: use the faucet beside the amount.</p>
      )}
    </section>
  );
}

/** A quote's figures: what is paid and received, the minimum after slippage, price, impact, route and fees. */
function QuoteDetails({
  offer,
  input,
  output,
  byMint,
}: {
  offer: OrderQuote;
  input: Token;
  output: Token;
  byMint: Map<string, Token>;
}) {
  const paid = BigInt(offer.inAmount);
  const got = BigInt(offer.outAmount);
  const legs = offer.routePlan ?? [];
  const name = (mint: string) => {
    const token = byMint.get(mint);
    return token ? label(token) : `${mint.slice(0, 4)}…`;
  };
  const path = legs.length > 0 ? [legs[0]?.inputMint ?? "", ...legs.map((leg) => leg.outputMint)] : [];
  const impact = Number(offer.priceImpactPct) * 100;
  return (
    <dl
      class="quote"
      data-testid="swap-quote"
      data-out-amount={offer.outAmount}
      data-min-out={offer.otherAmountThreshold}
    >
      <dt>You pay</dt>
      <dd>
        {units(paid, input.decimals)} {label(input)}
      </dd>
      <dt>You receive</dt>
      <dd data-testid="swap-out">
        {units(got, output.decimals)} {label(output)}
      </dd>
      <dt>At least</dt>
      <dd>
        {units(offer.otherAmountThreshold, output.decimals)} {label(output)} ({offer.slippageBps} bps
        slippage)
      </dd>
      <dt>Price</dt>
      <dd>
        1 {label(input)} = {ratio(got, output.decimals, paid, input.decimals)} {label(output)}
        <br />1 {label(output)} = {ratio(paid, input.decimals, got, output.decimals)} {label(input)}
      </dd>
      <dt>Price impact</dt>
      <dd class={impact >= 1 ? "down" : undefined}>
        {impact < 0.01 && impact > 0 ? "<0.01" : impact.toFixed(2)}%
      </dd>
      <dt>Route</dt>
      <dd data-testid="swap-route">
        {path.map(name).join(" → ")}
        {legs.map((leg) => (
          <div key={leg.marketKey} class="muted small">
            {leg.venue} pool{" "}
            <span class="mono">
              {leg.marketKey.slice(0, 4)}…{leg.marketKey.slice(-4)}
            </span>
          </div>
        ))}
      </dd>
      <dt>Fees</dt>
      <dd data-testid="swap-fees">{fees(offer, input, output)}</dd>
    </dl>
  );
}

/** The quote's fees in words: the integrator's, the pools' (inside the price) and the priority fee. */
function fees(offer: OrderQuote, input: Token, output: Token): string {
  const parts: string[] = [];
  const platform = offer.platformFee;
  if (platform) {
    const token = platform.mode === "inputMint" ? input : output;
    parts.push(`platform ${units(platform.amount, token.decimals)} ${label(token)} (${platform.feeBps} bps)`);
  } else parts.push("no platform fee");
  parts.push("pool fees are in the price");
  if (offer.prioritizationFeeLamports) {
    parts.push(`priority fee ${units(offer.prioritizationFeeLamports, 9)} SOL`);
  }
  return parts.join("; ");
}
