/**
 * The explorer's shell: header (navigation, stream state, theme), the API key prompt of production
 * instances, and the view of the current hash route. Sandbox views are loaded only in development.
 */
import "./style.css";
import type { ComponentType } from "preact";
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { apiKey, keyRefused, loadSettings, needsKey, setApiKey, settings } from "./api";
import { Banner, startHealthWatch } from "./banner";
import { upstreamDownSince } from "./health";
import { link, type Route, route } from "./router";
import { startStream, streamState } from "./stream";
import { nextTheme, themeChoice } from "./theme";
import { EventView } from "./views/Event";
import { MarketView } from "./views/Market";
import { Markets } from "./views/Markets";
import { StatusView } from "./views/Status";

const STATE_LABEL = {
  connecting: "connecting…",
  live: "live",
  offline: "offline, retrying",
  polling: "polling (no stream with a key)",
  stale: "upstream unavailable",
} as const;

function KeyPrompt() {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const refused = keyRefused.value;
  return (
    <form
      class="card key-prompt"
      onSubmit={(event) => {
        event.preventDefault();
        setApiKey(input.current?.value ?? "");
        location.reload();
      }}
    >
      <h2>API key</h2>
      <p>
        This instance runs in production: its data needs an API key. The key stays in this tab (session
        storage) and is sent in the <code>x-api-key</code> header only.
      </p>
      {refused && (
        <p class="error" role="alert" data-testid="key-refused">
          The key this tab used was refused: {refused}. Check it (or ask for a new one) and enter it again.
        </p>
      )}
      <label>
        <span>Key</span>
        <input ref={input} type="password" name="apiKey" autocomplete="off" required />
      </label>
      <button type="submit" class="primary">
        Use key
      </button>
    </form>
  );
}

function Sandboxed({ load }: { load: () => Promise<ComponentType> }) {
  const [View, setView] = useState<ComponentType | null>(null);
  useEffect(() => {
    load().then((component) => setView(() => component));
  }, [load]);
  return View ? <View /> : <p class="muted">Loading…</p>;
}

const loadWallet = () => import("./sandbox/WalletView").then((module) => module.WalletView);
const loadSwap = () => import("./sandbox/SwapView").then((module) => module.SwapView);

function View({ current }: { current: Route }) {
  const [first, second] = current.parts;
  if (first === "event" && second) return <EventView ticker={second} />;
  if (first === "market" && second) return <MarketView ticker={second} />;
  if (first === "status") return <StatusView />;
  if (first === "wallet" || first === "swap") {
    return settings.value.sandbox ? (
      <Sandboxed key={first} load={first === "swap" ? loadSwap : loadWallet} />
    ) : (
      <p>The test wallet is offered on development instances with the sandbox chain only.</p>
    );
  }
  return <Markets route={current} />;
}

const searchBox = () => document.querySelector<HTMLInputElement>('input[type="search"]');

/** Set by "/" on another view: the events list, once shown, focuses its search box instead of itself. */
let searchWanted = false;

function App() {
  const current = route.value;
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    // Keyboard users land on the new view, not at the top of the header (or in its search box when
    // they came with "/"). Runs once the new view is in the DOM, so nothing moves focus after it.
    const box = searchWanted && current.parts.length === 0 ? searchBox() : null;
    searchWanted = false;
    if (box) box.focus({ preventScroll: true });
    else main.current?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [current.path]);
  useEffect(() => {
    // "/" jumps to the search box, as on most sites: at once on the events list (the next key
    // typed goes into it), else once the list is shown.
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.key !== "/" || /INPUT|SELECT|TEXTAREA/.test(target.tagName)) return;
      event.preventDefault();
      if (route.value.parts.length === 0) searchBox()?.focus();
      else {
        searchWanted = true;
        location.hash = "/";
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  // "live" only while the upstream answers: a stale stream or a failing upstream says so instead.
  const upstreamDown = upstreamDownSince.value !== null;
  const state =
    upstreamDown && (streamState.value === "live" || streamState.value === "polling")
      ? "stale"
      : streamState.value;
  const here = current.parts[0] ?? "";
  return (
    <>
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href={link("/")}>
          Oddsgate <span class="muted">explorer</span>
        </a>
        <nav aria-label="Main">
          <a
            href={link("/")}
            aria-current={here === "" || here === "event" || here === "market" ? "page" : undefined}
          >
            Markets
          </a>
          {settings.value.sandbox && (
            <a href={link("/wallet")} aria-current={here === "wallet" ? "page" : undefined}>
              Wallet
            </a>
          )}
          {settings.value.sandbox && (
            <a href={link("/swap")} aria-current={here === "swap" ? "page" : undefined}>
              Swap
            </a>
          )}
          <a href={link("/status")} aria-current={here === "status" ? "page" : undefined}>
            Status
          </a>
        </nav>
        <span class={`conn conn-${state}`} role="status" data-testid="stream-state" data-state={state}>
          <span class="dot" aria-hidden="true" /> {STATE_LABEL[state]}
        </span>
        {settings.value.mode === "production" && apiKey.value && (
          <button
            type="button"
            class="link"
            onClick={() => {
              setApiKey("");
              location.reload();
            }}
          >
            Forget key
          </button>
        )}
        <button type="button" class="theme" onClick={nextTheme} aria-label={`Theme: ${themeChoice.value}`}>
          {themeChoice.value === "dark" ? "☾" : themeChoice.value === "light" ? "☀" : "◐"}
        </button>
      </header>
      <Banner />
      <main
        id="main"
        ref={main}
        tabIndex={-1}
        data-stale={upstreamDown && here !== "status" ? "upstream" : undefined}
      >
        {needsKey.value ? <KeyPrompt /> : <View current={current} />}
      </main>
    </>
  );
}

// The first view's requests start at once; the settings (sandbox controls, key prompt) follow.
render(<App />, document.getElementById("app") as HTMLElement);
startStream();
startHealthWatch();
void loadSettings().then(() => {
  if (settings.value.mode === "production" && !apiKey.value) needsKey.value = true;
});
