/**
 * The simulator's controls, in development with the embedded simulator (the venue's `/explorer/sim/*`
 * relays them to its `/_sim` routes and syncs the catalogue after a change): on the Status view its
 * clock, its markets by status, paused markets and faults, with buttons to move the clock on and to
 * make every upstream request fail; on a market's page, pause, resume and settle. Nothing is polled:
 * the panel reads the simulator once, and again after each change.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, count, getJson, postJson } from "../api";
import { dateTime } from "../format";
import "./sandbox.css";

interface SimStatus {
  now: number;
  clockOffsetSeconds: number;
  markets: Record<string, number>;
  paused: string[];
  faults: unknown[];
}

const HOUR = 3_600;
const DAY = 86_400;
/** Every upstream request answered 503, until cleared. */
const OUTAGE = [{ kind: "status", status: 503 }];
/** Paused markets named in the panel; the rest are counted. */
const PAUSED_NAMED = 5;

const failure = (error: unknown) => (error instanceof ApiError ? error.message : String(error));

/** "+2 h 30 min", "+3 d": how far the simulator's clock runs ahead of real time. */
function offsetText(seconds: number): string {
  if (seconds === 0) return "real time";
  const days = Math.floor(seconds / DAY);
  const hours = Math.floor((seconds % DAY) / HOUR);
  const minutes = Math.floor((seconds % HOUR) / 60);
  const parts = [days ? `${days} d` : "", hours ? `${hours} h` : "", minutes ? `${minutes} min` : ""];
  return `+${parts.filter(Boolean).join(" ") || `${seconds} s`} ahead`;
}

/** The paused markets, the first few by name. */
function pausedText(status: SimStatus): string {
  const paused = status.markets.inactive ?? status.paused.length;
  if (paused === 0) return "none";
  const named = status.paused.slice(0, PAUSED_NAMED).join(", ");
  return paused > PAUSED_NAMED ? `${named} and ${count(paused - PAUSED_NAMED)} more` : named;
}

/** The Status view's panel: the simulator at a glance, its clock moved on, an upstream outage started and ended. */
export function SimulatorPanel() {
  const [status, setStatus] = useState<SimStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const read = () =>
    getJson<SimStatus>("/explorer/sim/status").then(setStatus, (error) => setMessage(failure(error)));
  useEffect(() => {
    void read();
  }, []);
  const act = async (label: string, change: () => Promise<unknown>) => {
    setBusy(true);
    setMessage("");
    try {
      await change();
      await read();
      setMessage(label);
    } catch (error) {
      setMessage(failure(error));
    } finally {
      setBusy(false);
    }
  };
  const advance = (seconds: number, label: string) =>
    act(`Clock moved on ${label}.`, () => postJson("/explorer/sim/clock", { advanceSeconds: seconds }));
  const faulty = (status?.faults.length ?? 0) > 0;
  return (
    <section class="card" aria-labelledby="simulator-title" data-testid="simulator-panel">
      <h2 id="simulator-title">Simulator</h2>
      {status ? (
        <dl class="facts small">
          <dt>Clock</dt>
          <dd data-testid="sim-clock" data-now={status.now}>
            {dateTime(status.now)} · {offsetText(status.clockOffsetSeconds)}
          </dd>
          <dt>Markets</dt>
          <dd>
            {Object.entries(status.markets)
              .filter(([, n]) => n > 0)
              .map(([name, n]) => `${count(n)} ${name}`)
              .join(" · ")}
          </dd>
          <dt>Paused</dt>
          <dd data-testid="sim-paused">{pausedText(status)}</dd>
          <dt>Faults</dt>
          <dd data-testid="sim-faults" class={faulty ? "down" : undefined}>
            {faulty ? "every upstream request fails" : "none"}
          </dd>
        </dl>
      ) : (
        <p class="muted">Loading…</p>
      )}
      <div class="row">
        <button type="button" disabled={busy} onClick={() => advance(HOUR, "an hour")}>
          +1 hour
        </button>
        <button type="button" disabled={busy} onClick={() => advance(DAY, "a day")}>
          +1 day
        </button>
        {faulty ? (
          <button
            type="button"
            disabled={busy}
            onClick={() => act("Faults cleared.", () => postJson("/explorer/sim/faults", [], "PUT"))}
          >
            End the outage
          </button>
        ) : (
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() =>
              act("Every upstream request now fails.", () => postJson("/explorer/sim/faults", OUTAGE, "PUT"))
            }
          >
            Start an upstream outage
          </button>
        )}
      </div>
      <p class="muted small" role="status" data-testid="sim-message">
        {message || "The simulator's clock only moves on; a market's change reaches the venue at once."}
      </p>
    </section>
  );
}

/** A market's lifecycle controls: pause and resume its trading, settle it yes or no. */
export function MarketSimControls({
  ticker,
  status,
  onChanged,
}: {
  ticker: string;
  status: string;
  onChanged: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const change = async (label: string, body: { status: string; result?: string }) => {
    setBusy(true);
    setMessage("");
    try {
      await postJson(`/explorer/sim/markets/${encodeURIComponent(ticker)}/lifecycle`, body);
      setMessage(label);
      onChanged();
    } catch (error) {
      setMessage(failure(error));
    } finally {
      setBusy(false);
    }
  };
  const settled = status === "determined" || status === "finalized";
  return (
    <div class="sim-controls row small" data-testid="market-sim-controls">
      <span class="muted">Simulator:</span>
      {status === "active" && (
        <button
          type="button"
          disabled={busy}
          onClick={() => change("Trading paused.", { status: "inactive" })}
        >
          Pause
        </button>
      )}
      {status === "inactive" && (
        <button
          type="button"
          disabled={busy}
          onClick={() => change("Trading resumed.", { status: "active" })}
        >
          Resume
        </button>
      )}
      {!settled && (
        <>
          <button
            type="button"
            disabled={busy}
            onClick={() => change("Settled yes.", { status: "determined", result: "yes" })}
          >
            Settle yes
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => change("Settled no.", { status: "determined", result: "no" })}
          >
            Settle no
          </button>
        </>
      )}
      <span class="muted" role="status" data-testid="market-sim-message">
        {message}
      </span>
    </div>
  );
}
