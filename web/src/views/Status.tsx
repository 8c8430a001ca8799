/**
 * Operations: the health report (each part's state, the upstream's circuit breaker, the catalogue's
 * age, the chain's slot; the plain `/health-check` on instances without the report), the chain's block
 * height and the venue's Prometheus metrics (stream fan-out, catalogue, and whatever else the instance
 * exports). Idle, it costs the venue 9 requests a minute: the shared health watch every 15 s, the
 * metrics every 15 s and the block height every minute, and nothing while the tab is hidden.
 */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, count, getText, postJson, settings } from "../api";
import { clock, dateTime } from "../format";
import { healthCadenceMs, healthReadAt, healthReport } from "../health";

interface Sample {
  name: string;
  labels: string;
  value: number;
}

/** Parses the Prometheus text format's samples (comments and histograms' buckets left out). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1]?.endsWith("_bucket")) continue;
    samples.push({ name: match[1] as string, labels: match[2] ?? "", value: Number(match[3]) });
  }
  return samples;
}

/** How often the Status view reads the health report and the metrics. */
const REFRESH_MS = 15_000;
/** How often it reads the block height (the slot comes with the health report). */
const HEIGHT_MS = 60_000;

/** The plain health check's text, for an instance without the report. */
async function plainHealth(): Promise<string> {
  try {
    return (await getText("/health-check")).trim();
  } catch (error) {
    return error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
  }
}

/** "12 s", "4 min", "3 h": how long ago an ISO time was. */
function age(iso: string | undefined): string {
  if (!iso) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3_600)} h`;
}

const INTERESTING = /upstream|breaker|sync|stream|client|catalog|chain|slot|keeper|order/;

async function chainCall(method: string): Promise<number | null> {
  try {
    const body = await postJson<{ result?: number }>("/explorer/rpc", {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: [],
    });
    return body.result ?? null;
  } catch {
    return null;
  }
}

/** Runs `load` now and every `ms` while the tab is shown (and at once when it is shown again). */
function useVisibleInterval(load: () => void, ms: number): void {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      clearInterval(timer);
      if (document.hidden) return;
      load();
      timer = setInterval(load, ms);
    };
    document.addEventListener("visibilitychange", start);
    start();
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", start);
    };
  }, [ms]);
}

/** The operations page. */
export function StatusView() {
  const [plain, setPlain] = useState<string | null>(null);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [height, setHeight] = useState<number | null>(null);
  const [updated, setUpdated] = useState<Date | null>(null);
  const [SimulatorPanel, setSimulatorPanel] = useState<ComponentType | null>(null);
  const report = healthReport.value;
  const readAt = healthReadAt.value;

  useEffect(() => {
    // The health watch reads the report at this view's pace while it is shown.
    const before = healthCadenceMs.value;
    healthCadenceMs.value = REFRESH_MS;
    return () => {
      healthCadenceMs.value = before;
    };
  }, []);

  // Development with the embedded simulator: its controls, a chunk of their own.
  useEffect(() => {
    if (!settings.value.simulator) return;
    import("../sandbox/SimControls").then((module) => setSimulatorPanel(() => module.SimulatorPanel));
  }, [settings.value.simulator]);

  // An instance without the report: its plain check, once it is known to have none.
  useEffect(() => {
    if (readAt !== null && report === null) void plainHealth().then(setPlain);
  }, [readAt, report]);

  useVisibleInterval(() => {
    void getText("/metrics")
      .then(parseMetrics, () => [] as Sample[])
      .then((metrics) => {
        setSamples(metrics);
        setUpdated(new Date());
      });
  }, REFRESH_MS);
  useVisibleInterval(() => void chainCall("getBlockHeight").then(setHeight), HEIGHT_MS);

  const health = report ? report.status : (plain ?? "…");
  const slot = report?.parts.chain?.slot ?? null;

  const shown = samples.filter(
    (sample) => sample.name.startsWith("oddsgate_") && INTERESTING.test(sample.name),
  );
  const requests = samples
    .filter((sample) => sample.name === "oddsgate_http_requests_total")
    .reduce((sum, sample) => sum + sample.value, 0);
  // Whatever gauge of connected stream clients the instance exports, summed.
  const clients = samples.filter((sample) => /stream.*(clients|connections)$/.test(sample.name));
  const streamClients = clients.length ? clients.reduce((sum, sample) => sum + sample.value, 0) : undefined;
  const started = samples.find((sample) => sample.name === "process_start_time_seconds")?.value;

  return (
    <section aria-labelledby="status-title">
      <h1 id="status-title">Operations</h1>
      <div class="tiles">
        <div class="tile">
          <span class="muted small">Health check</span>
          <strong class={health === "ok" ? "up" : "down"} data-testid="health">
            {health}
          </strong>
        </div>
        <div class="tile">
          <span class="muted small">Chain slot</span>
          <strong data-testid="slot">{slot === null ? "—" : count(slot)}</strong>
        </div>
        <div class="tile">
          <span class="muted small">Block height</span>
          <strong>{height === null ? "—" : count(height)}</strong>
        </div>
        <div class="tile">
          <span class="muted small">Upstream breaker</span>
          <strong>{report?.parts.upstream?.state ?? "—"}</strong>
        </div>
        <div class="tile">
          <span class="muted small">Catalogue age</span>
          <strong>{age(report?.parts.catalogue?.loadedAt)}</strong>
        </div>
        <div class="tile">
          <span class="muted small">Stream clients</span>
          <strong data-testid="stream-clients">
            {streamClients === undefined ? "—" : count(streamClients)}
          </strong>
        </div>
        <div class="tile">
          <span class="muted small">HTTP requests served</span>
          <strong>{count(requests)}</strong>
        </div>
        <div class="tile">
          <span class="muted small">Up since</span>
          <strong>{dateTime(started)}</strong>
        </div>
      </div>
      {SimulatorPanel && <SimulatorPanel />}
      {report && (
        <section class="card" aria-labelledby="parts-title">
          <h2 id="parts-title">Parts {report.ready ? "(ready)" : "(not ready)"}</h2>
          <div class="table-wrap">
            <table class="small" data-testid="health-parts">
              <thead>
                <tr>
                  <th scope="col">Part</th>
                  <th scope="col">State</th>
                  <th scope="col" class="opt">
                    Required
                  </th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(report.parts).map(([name, part]) =>
                  part ? (
                    <tr key={name}>
                      <td>{name}</td>
                      <td class={part.ok ? "up" : "down"}>{part.state}</td>
                      <td class="opt">{part.required ? "yes" : "no"}</td>
                      <td class="muted">
                        {[
                          part.slot !== undefined ? `slot ${count(part.slot)}` : "",
                          part.latencyMs !== undefined ? `${part.latencyMs} ms` : "",
                          part.loadedAt ? `loaded ${age(part.loadedAt)} ago` : "",
                          part.detail ?? "",
                        ]
                          .filter(Boolean)
                          .join(" · ")}
                      </td>
                    </tr>
                  ) : null,
                )}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section class="card" aria-labelledby="metrics-title">
        <h2 id="metrics-title">Metrics</h2>
        <div class="table-wrap">
          <table class="small mono">
            <thead>
              <tr>
                <th scope="col">Metric</th>
                <th scope="col">Labels</th>
                <th scope="col" class="num">
                  Value
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((sample) => (
                <tr key={`${sample.name}${sample.labels}`}>
                  <td>{sample.name.replace(/^oddsgate_/, "")}</td>
                  <td class="muted">{sample.labels.replace(/[{}"]/g, "")}</td>
                  <td class="num">
                    {Number.isInteger(sample.value) ? count(sample.value) : sample.value.toFixed(3)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p class="muted small">
          {updated ? `Updated ${clock(updated.getTime() / 1000)}, every 15 s.` : "Loading…"}
        </p>
      </section>
    </section>
  );
}
