/**
 * Where the server's memory goes, by part. Starts the built server (`dist/`) on a generated catalogue
 * (as bench/http.ts's start-up section writes and imports it) or on the demo catalogue, and once it is
 * ready prints:
 *
 *   - the process as the kernel sees it (/proc/<pid>/status: VmRSS, VmHWM, RssAnon, RssFile);
 *   - `process.memoryUsage()` from inside the server, per thread (main, the SQLite writer worker, the
 *     signature-verifier worker), before and after a full GC, read through the inspector, which is
 *     switched on only after readiness (`--inspect-port` at spawn, SIGUSR1 once ready) so it costs
 *     nothing during start-up;
 *   - the main thread's heap snapshot, summarized by constructor (self size, self plus arrays and
 *     backing stores only it holds, count), by node type, and a few string families;
 *   - what native memory (LiteSVM, SQLite, malloc) holds: RSS minus the V8 heaps and external memory,
 *     against LiteSVM's cost per account measured in a child process and the `chain_accounts` table;
 *   - then the same figures (without the snapshot) after a restart on the same data directory, when
 *     the chain is loaded from storage instead of created by genesis.
 *
 *   npx tsx bench/memory.ts [--events 10000] [--markets 50000] [--demo] [--no-snapshot] [--no-restart]
 *                           [--settle 10]   (measure 10 s after ready: after the first sync and its reload)
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import WebSocket from "ws";
import { generateDemoCatalogue, sizedCatalogue } from "../src/demo/generate.js";
import {
  importCatalogue,
  machineBaselines,
  pickPort,
  type StartedServer,
  serverNodeFlags,
  sleep,
  startServer,
  stopServer,
  tempDataDir,
} from "./support.js";

const { values: args } = parseArgs({
  options: {
    events: { type: "string", default: "10000" },
    markets: { type: "string" },
    scale: { type: "string", default: "25" },
    demo: { type: "boolean", default: false },
    "no-snapshot": { type: "boolean", default: false },
    "no-restart": { type: "boolean", default: false },
    /** Skip the malloc_trim(0) probe (gdb attached to the server after measuring). */
    "no-trim": { type: "boolean", default: false },
    "snapshot-timeout": { type: "string", default: "240" },
    /** Seconds to wait after readiness before measuring (10 takes in the first sync and its reload). */
    settle: { type: "string", default: "0" },
    top: { type: "string", default: "25" },
    /** Internal: measure LiteSVM's memory per account in this process and print it as JSON. */
    calibrate: { type: "string" },
  },
});
const MAIN = path.resolve("dist/cli/main.js");
const ANCHOR = Math.floor(Date.now() / 86_400_000) * 86_400;
const MB = 1024 * 1024;
const TOP = Number(args.top);
const BENCH_STARTED = performance.now();
const elapsed = () => `${((performance.now() - BENCH_STARTED) / 1000).toFixed(0)} s`;

const mb = (bytes: number) => (bytes / MB).toFixed(1).padStart(8);
const row = (label: string, ...cells: string[]) => console.log(`  ${label.padEnd(46)}${cells.join("")}`);

// ---------------------------------------------------------------------------------------------------
// The kernel's view.

interface ProcStatus {
  vmRss: number;
  vmHwm: number;
  rssAnon: number;
  rssFile: number;
  threads: number;
}

function procStatus(pid: number): ProcStatus {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return {
    vmRss: kb("VmRSS"),
    vmHwm: kb("VmHWM"),
    rssAnon: kb("RssAnon"),
    rssFile: kb("RssFile"),
    threads: kb("Threads") / 1024,
  };
}

/** Resident bytes of the brk heap (glibc's main malloc arena) and of anonymous mappings, from smaps. */
function smapsSummary(pid: number): { brkHeap: number; anonMaps: number; anonMapsOver64Mb: number } {
  let brkHeap = 0;
  let anonMaps = 0;
  let anonMapsOver64Mb = 0;
  let current: { name: string; size: number } | null = null;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = {
        name: head[3] ?? "",
        size: Number.parseInt(head[2] as string, 16) - Number.parseInt(head[1] as string, 16),
      };
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) {
      const bytes = Number(rss[1]) * 1024;
      if (current.name === "[heap]") brkHeap += bytes;
      else if (current.name === "") {
        anonMaps += bytes;
        if (current.size >= 64 * MB) anonMapsOver64Mb += bytes;
      }
    }
  }
  return { brkHeap, anonMaps, anonMapsOver64Mb };
}

// ---------------------------------------------------------------------------------------------------
// A small Chrome DevTools Protocol client: the main thread, and workers through the NodeWorker domain.

type Params = Record<string, unknown>;

class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly listeners = new Map<string, ((params: Params) => void)[]>();
  private readonly workerSessions = new Map<string, WorkerSession>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: Params;
      };
      if (message.id !== undefined) {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiting?.reject(new Error(message.error.message));
        else waiting?.resolve(message.result);
        return;
      }
      if (message.method === "NodeWorker.receivedMessageFromWorker") {
        const params = message.params as { sessionId: string; message: string };
        this.workerSessions.get(params.sessionId)?.receive(params.message);
        return;
      }
      for (const listener of this.listeners.get(message.method ?? "") ?? []) listener(message.params ?? {});
    });
  }

  static async connect(port: number, timeoutMs = 10_000): Promise<Inspector> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const url = targets[0]?.webSocketDebuggerUrl;
        if (url) {
          const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
          await new Promise((resolve, reject) => {
            ws.once("open", resolve);
            ws.once("error", reject);
          });
          return new Inspector(ws);
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`no inspector on 127.0.0.1:${port}`);
      await sleep(50);
    }
  }

  send<T = Params>(method: string, params: Params = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  on(method: string, listener: (params: Params) => void): () => void {
    const list = this.listeners.get(method) ?? [];
    list.push(listener);
    this.listeners.set(method, list);
    return () => list.splice(list.indexOf(listener), 1);
  }

  /** The workers running now, each with a session of its own. */
  async workers(waitMs = 1_000): Promise<WorkerSession[]> {
    const found: WorkerSession[] = [];
    const off = this.on("NodeWorker.attachedToWorker", (params) => {
      const { sessionId, workerInfo } = params as {
        sessionId: string;
        workerInfo: { workerId: string; title: string; url: string };
      };
      const session = new WorkerSession(this, sessionId, workerInfo.workerId, workerInfo.title);
      this.workerSessions.set(sessionId, session);
      found.push(session);
    });
    await this.send("NodeWorker.enable", { waitForDebuggerOnStart: false });
    await sleep(waitMs);
    off();
    return found;
  }

  close(): void {
    this.ws.close();
  }
}

class WorkerSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(
    private readonly parent: Inspector,
    readonly sessionId: string,
    readonly workerId: string,
    readonly title: string,
  ) {}

  receive(raw: string): void {
    const message = JSON.parse(raw) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    const waiting = this.pending.get(message.id);
    this.pending.delete(message.id);
    if (message.error) waiting?.reject(new Error(message.error.message));
    else waiting?.resolve(message.result);
  }

  send<T = Params>(method: string, params: Params = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      void this.parent
        .send("NodeWorker.sendMessageToWorker", {
          sessionId: this.sessionId,
          message: JSON.stringify({ id, method, params }),
        })
        .catch(reject);
    });
  }
}

interface Usage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

type Target = Pick<Inspector, "send">;

/** `process.memoryUsage()` evaluated in the target's isolate (heap and external figures are per isolate). */
async function memoryUsageOf(target: Target): Promise<Usage> {
  const result = await target.send<{ result: { value: string } }>("Runtime.evaluate", {
    expression: "JSON.stringify(process.memoryUsage())",
    returnByValue: true,
  });
  return JSON.parse(result.result.value) as Usage;
}

/** What a worker runs, from the first characters of its source (they are evaluated strings). */
async function workerKind(target: Target): Promise<string> {
  const result = await target
    .send<{ result: { value?: string } }>("Runtime.evaluate", {
      expression:
        "(() => { const d = require('node:worker_threads').workerData || {}; return d.litesvm ? 'signature-verifier worker' : d.driver ? 'SQLite writer worker' : 'worker ' + Object.keys(d).join(','); })()",
      returnByValue: true,
    })
    .catch(() => ({ result: { value: undefined } }));
  return result.result.value ?? "worker";
}

// ---------------------------------------------------------------------------------------------------
// Heap snapshot: taken through the inspector into a file, then summarized by a small parser.

async function takeHeapSnapshot(inspector: Inspector, file: string, timeoutMs: number): Promise<number> {
  const fd = fs.openSync(file, "w");
  let bytes = 0;
  const off = inspector.on("HeapProfiler.addHeapSnapshotChunk", (params) => {
    const chunk = params.chunk as string;
    bytes += fs.writeSync(fd, chunk);
  });
  try {
    await Promise.race([
      inspector.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false, captureNumericValue: false }),
      sleep(timeoutMs).then(() => {
        throw new Error(`the heap snapshot took longer than ${timeoutMs / 1000} s`);
      }),
    ]);
  } finally {
    off();
    fs.closeSync(fd);
  }
  return bytes;
}

interface Group {
  name: string;
  count: number;
  self: number;
  /** Self plus the arrays, hidden objects and backing stores that only this node holds. */
  owned: number;
}

interface SnapshotSummary {
  nodes: number;
  edges: number;
  totalSelf: number;
  byConstructor: Group[];
  byType: Group[];
  strings: Group[];
  parseMs: number;
  /** For the biggest groups: who holds them (the nearest object up the first-retainer chain, and the edge). */
  holders: Map<string, Group[]>;
}

/** Parses the unsigned integers of a JSON array starting at `start` (just after `[`) into `out`. */
function parseIntArray(buf: Buffer, start: number, out: Float64Array | Uint32Array): number {
  let i = start;
  let n = 0;
  let value = 0;
  let inNumber = false;
  for (; i < buf.length; i++) {
    const c = buf[i] as number;
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) {
        out[n++] = value;
        value = 0;
        inNumber = false;
      }
      if (c === 93) break; // ]
    }
  }
  if (n !== out.length) throw new Error(`expected ${out.length} numbers, parsed ${n}`);
  return i;
}

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

function summarizeSnapshot(file: string): SnapshotSummary {
  const started = performance.now();
  const buf = fs.readFileSync(file);
  const nodesAt = buf.indexOf('"nodes":[');
  const header = JSON.parse(`${buf.subarray(0, nodesAt).toString().trim().replace(/,$/, "")}}`) as {
    snapshot: {
      meta: {
        node_fields: string[];
        node_types: [string[], ...unknown[]];
        edge_fields: string[];
        edge_types: [string[], ...unknown[]];
      };
      node_count: number;
      edge_count: number;
    };
  };
  const meta = header.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const nodes = new Float64Array(header.snapshot.node_count * nodeFieldCount);
  const edges = new Uint32Array(header.snapshot.edge_count * edgeFieldCount);
  const afterNodes = parseIntArray(buf, nodesAt + 9, nodes);
  const edgesAt = buf.indexOf('"edges":[', afterNodes);
  parseIntArray(buf, edgesAt + 9, edges);
  const stringsAt = buf.lastIndexOf('"strings":[');
  const stringsEnd = buf.lastIndexOf("]");
  const strings = JSON.parse(buf.subarray(stringsAt + 10, stringsEnd + 1).toString()) as string[];

  const TYPE = meta.node_fields.indexOf("type");
  const NAME = meta.node_fields.indexOf("name");
  const SELF = meta.node_fields.indexOf("self_size");
  const EDGE_COUNT = meta.node_fields.indexOf("edge_count");
  const EDGE_TYPE = meta.edge_fields.indexOf("type");
  const TO_NODE = meta.edge_fields.indexOf("to_node");
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const typeId = (name: string) => nodeTypes.indexOf(name);
  const OBJECT = typeId("object");
  const CLOSURE = typeId("closure");
  const NATIVE = typeId("native");
  const REGEXP = typeId("regexp");
  const ownedTypes = new Set([typeId("array"), typeId("hidden"), NATIVE, typeId("object shape")]);
  const WEAK = edgeTypes.indexOf("weak");
  const stringTypes = new Set(["string", "concatenated string", "sliced string"].map(typeId));
  const nodeCount = header.snapshot.node_count;

  // In-degree (weak edges aside), so that "owned" counts only children held by one node.
  const inDegree = new Uint32Array(nodeCount);
  for (let e = 0; e < edges.length; e += edgeFieldCount) {
    if (edges[e + EDGE_TYPE] === WEAK) continue;
    const to = (edges[e + TO_NODE] as number) / nodeFieldCount;
    inDegree[to] = (inDegree[to] as number) + 1;
  }

  const groups = new Map<string, Group>();
  const types = new Map<string, Group>();
  const stringGroups = new Map<string, Group>();
  const add = (map: Map<string, Group>, name: string, self: number, owned: number) => {
    let group = map.get(name);
    if (!group) {
      group = { name, count: 0, self: 0, owned: 0 };
      map.set(name, group);
    }
    group.count++;
    group.self += self;
    group.owned += owned;
  };
  let totalSelf = 0;
  let edgeIndex = 0;
  for (let n = 0; n < nodeCount; n++) {
    const base = n * nodeFieldCount;
    const type = nodes[base + TYPE] as number;
    const self = nodes[base + SELF] as number;
    const edgeCount = nodes[base + EDGE_COUNT] as number;
    totalSelf += self;
    let owned = self;
    if (type === OBJECT || type === CLOSURE) {
      for (let e = edgeIndex; e < edgeIndex + edgeCount * edgeFieldCount; e += edgeFieldCount) {
        if (edges[e + EDGE_TYPE] === WEAK) continue;
        const to = (edges[e + TO_NODE] as number) / nodeFieldCount;
        if (inDegree[to] !== 1) continue;
        const toType = nodes[to * nodeFieldCount + TYPE] as number;
        if (ownedTypes.has(toType)) owned += nodes[to * nodeFieldCount + SELF] as number;
      }
    }
    edgeIndex += edgeCount * edgeFieldCount;
    const typeName = nodeTypes[type] ?? String(type);
    const name = strings[nodes[base + NAME] as number] ?? "";
    let group: string;
    if (type === OBJECT || type === NATIVE || type === REGEXP) group = name;
    else if (type === CLOSURE) group = "(closure)";
    else if (stringTypes.has(type)) group = "(string)";
    else group = `(${typeName})`;
    add(groups, group, self, owned);
    add(types, typeName, self, self);
    if (stringTypes.has(type)) {
      let family: string;
      if (BASE58_ADDRESS.test(name)) family = "base58 addresses (32-44 chars)";
      else if (name.startsWith("{") || name.startsWith("[")) family = "JSON text";
      else if (self >= 1024) family = "other, >= 1 KB";
      else family = "other, < 1 KB";
      add(stringGroups, family, self, self);
    }
  }
  const sorted = (map: Map<string, Group>, key: "self" | "owned") =>
    [...map.values()].sort((a, b) => b[key] - a[key]);

  // Holders of the biggest groups: each node's first non-weak retainer, climbed past arrays and
  // internal objects to the nearest object, named "Constructor.edge".
  const retainer = new Int32Array(nodeCount).fill(-1);
  const retainerEdge = new Int32Array(nodeCount).fill(-1);
  const EDGE_NAME = meta.edge_fields.indexOf("name_or_index");
  const ELEMENT = edgeTypes.indexOf("element");
  const HIDDEN_EDGE = edgeTypes.indexOf("hidden");
  const SHORTCUT = edgeTypes.indexOf("shortcut");
  edgeIndex = 0;
  for (let n = 0; n < nodeCount; n++) {
    const edgeCount = nodes[n * nodeFieldCount + EDGE_COUNT] as number;
    for (let e = edgeIndex; e < edgeIndex + edgeCount * edgeFieldCount; e += edgeFieldCount) {
      const type = edges[e + EDGE_TYPE] as number;
      if (type === WEAK || type === SHORTCUT) continue;
      const to = (edges[e + TO_NODE] as number) / nodeFieldCount;
      if (retainer[to] === -1 && n !== 0) {
        retainer[to] = n;
        retainerEdge[to] = type === ELEMENT || type === HIDDEN_EDGE ? -2 : (edges[e + EDGE_NAME] as number);
      }
    }
    edgeIndex += edgeCount * edgeFieldCount;
  }
  const wanted = new Set(
    sorted(groups, "owned")
      .slice(0, 12)
      .map((g) => g.name),
  );
  const holderMaps = new Map<string, Map<string, Group>>();
  const nameOf = (n: number) => strings[nodes[n * nodeFieldCount + NAME] as number] ?? "";
  const typeOf = (n: number) => nodes[n * nodeFieldCount + TYPE] as number;
  const groupOf = (n: number) => {
    const type = typeOf(n);
    if (type === OBJECT || type === NATIVE || type === REGEXP) return nameOf(n);
    if (type === CLOSURE) return "(closure)";
    if (stringTypes.has(type)) return "(string)";
    return `(${nodeTypes[type]})`;
  };
  const containers = new Set([
    "Array",
    "Object",
    "Map",
    "Set",
    "(array)",
    "(hidden)",
    "(object shape)",
    "system / Context",
  ]);
  for (let n = 0; n < nodeCount; n++) {
    const group = groupOf(n);
    if (!wanted.has(group)) continue;
    // Climb through containers (arrays, plain objects, Maps, Sets) to a named holder, at most 6 steps.
    let at = n;
    let edge = "";
    for (let step = 0; step < 6; step++) {
      const up = retainer[at] as number;
      if (up < 0) break;
      const e = retainerEdge[at] as number;
      edge = e === -2 ? "[]" : typeof strings[e] === "string" ? (strings[e] as string) : "[]";
      at = up;
      if (!containers.has(groupOf(at))) break;
      edge = `${edge}`;
    }
    const holder = `${groupOf(at)}${edge === "[]" ? "[]" : `.${edge}`}`;
    let map = holderMaps.get(group);
    if (!map) {
      map = new Map();
      holderMaps.set(group, map);
    }
    add(map, holder.slice(0, 60), nodes[n * nodeFieldCount + SELF] as number, 0);
  }
  const holders = new Map([...holderMaps].map(([group, map]) => [group, sorted(map, "self").slice(0, 4)]));
  return {
    holders,
    nodes: nodeCount,
    edges: header.snapshot.edge_count,
    totalSelf,
    byConstructor: sorted(groups, "owned"),
    byType: sorted(types, "self"),
    strings: sorted(stringGroups, "self"),
    parseMs: performance.now() - started,
  };
}

// ---------------------------------------------------------------------------------------------------
// LiteSVM's memory per account, measured in a child process with nothing else in it.

async function calibrate(count: number): Promise<void> {
  const { createSvm, putAccount } = await import("../src/chain/sandbox/svm.js");
  const { encodeMint } = await import("../src/chain/token-layout.js");
  const { addressOf } = await import("../src/chain/base58.js");
  const { TOKEN_2022_PROGRAM } = await import("../src/chain/programs.js");
  const rssEmpty = procStatus(process.pid).vmRss;
  const svm = createSvm();
  const fixed = procStatus(process.pid).vmRss - rssEmpty;
  const accounts = Array.from({ length: count }, (_, i) => {
    const key = new Uint8Array(32);
    new DataView(key.buffer).setUint32(0, i + 1);
    key[31] = 7;
    return addressOf(key);
  });
  const data = encodeMint({
    mintAuthority: accounts[0] ?? null,
    supply: 0n,
    decimals: 6,
    freezeAuthority: null,
  });
  const rssBefore = procStatus(process.pid).vmRss;
  const usageBefore = process.memoryUsage();
  for (const address of accounts) {
    putAccount(svm, { address, lamports: 1_461_600n, owner: TOKEN_2022_PROGRAM, executable: false, data });
  }
  (globalThis as { gc?: () => void }).gc?.();
  const rssAfter = procStatus(process.pid).vmRss;
  const usageAfter = process.memoryUsage();
  const heapDelta = usageAfter.heapTotal - usageBefore.heapTotal + usageAfter.external - usageBefore.external;
  process.stdout.write(
    JSON.stringify({
      accounts: count,
      fixed,
      dataBytes: data.length,
      rssPerAccount: (rssAfter - rssBefore) / count,
      nativePerAccount: (rssAfter - rssBefore - heapDelta) / count,
    }),
  );
  // Keep the SVM alive until measured.
  void svm;
}

interface Calibration {
  fixed: number;
  rssPerAccount: number;
  nativePerAccount: number;
}

async function liteSvmPerAccount(count: number): Promise<Calibration> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--import", "tsx", path.resolve("bench/memory.ts"), "--calibrate", String(count)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
    });
    child.once("exit", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`calibration exited ${code}`)),
    );
  });
  return JSON.parse(out) as Calibration;
}

// ---------------------------------------------------------------------------------------------------
// SQLite: the chain's accounts in storage.

interface StorageFigures {
  dbBytes: number;
  walBytes: number;
  accounts: number;
  dataBytes: number;
  addressBytes: number;
  byOwner: { owner: string; count: number; dataBytes: number }[];
  byDataLength: { length: number; count: number }[];
  tables: { name: string; bytes: number }[];
  transactions: number;
}

function storageFigures(dataDir: string): StorageFigures {
  const file = path.join(dataDir, "oddsgate.db");
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const totals = db
      .prepare(
        'select count(*) as accounts, coalesce(sum(length("data")), 0) as dataBytes, coalesce(sum(length("address")), 0) as addressBytes from "chain_accounts"',
      )
      .get() as { accounts: number; dataBytes: number; addressBytes: number };
    const byOwner = db
      .prepare(
        'select "owner", count(*) as count, sum(length("data")) as dataBytes from "chain_accounts" group by "owner" order by count desc limit 6',
      )
      .all() as StorageFigures["byOwner"];
    const byDataLength = db
      .prepare(
        'select length("data") as length, count(*) as count from "chain_accounts" group by length("data") order by count desc limit 5',
      )
      .all() as StorageFigures["byDataLength"];
    let tables: StorageFigures["tables"] = [];
    try {
      tables = db
        .prepare("select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc limit 8")
        .all() as StorageFigures["tables"];
    } catch {
      // dbstat is not compiled in
    }
    const transactions = (db.prepare('select count(*) as n from "chain_transactions"').get() as { n: number })
      .n;
    const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
    return {
      dbBytes: size(file),
      walBytes: size(`${file}-wal`),
      ...totals,
      byOwner,
      byDataLength,
      tables,
      transactions,
    };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------------

interface Measured {
  status: ProcStatus;
  smaps: ReturnType<typeof smapsSummary>;
  threads: { name: string; before: Usage; after: Usage }[];
}

async function measure(
  server: StartedServer,
  inspectPort: number,
): Promise<{ m: Measured; inspector: Inspector }> {
  const pid = server.child.pid as number;
  const status = procStatus(pid);
  const smaps = smapsSummary(pid);
  // The inspector, switched on only now.
  process.kill(pid, "SIGUSR1");
  const inspector = await Inspector.connect(inspectPort);
  await inspector.send("Runtime.enable");
  const workers = await inspector.workers();
  const threads: Measured["threads"] = [];
  const mainBefore = await memoryUsageOf(inspector);
  await inspector.send("HeapProfiler.collectGarbage");
  threads.push({ name: "main thread", before: mainBefore, after: await memoryUsageOf(inspector) });
  for (const worker of workers) {
    await worker.send("Runtime.enable").catch(() => undefined);
    const name = await workerKind(worker);
    const before = await memoryUsageOf(worker);
    await worker.send("HeapProfiler.collectGarbage").catch(() => undefined);
    threads.push({ name, before, after: await memoryUsageOf(worker) });
  }
  return { m: { status, smaps, threads }, inspector };
}

function printMeasured(m: Measured, afterGc: ProcStatus, accounts: number, svm: Calibration): void {
  const s = m.status;
  console.log("\n  process (/proc/<pid>/status, at ready + two page reads, before any forced GC)");
  row("VmRSS (resident now)", mb(s.vmRss), " MB");
  row("VmHWM (peak resident)", mb(s.vmHwm), " MB");
  row("RssAnon / RssFile", mb(s.rssAnon), " MB", mb(s.rssFile), " MB");
  row("brk heap (glibc main arena) / anon mappings", mb(m.smaps.brkHeap), " MB", mb(m.smaps.anonMaps), " MB");
  row("VmRSS after forced GC in every isolate", mb(afterGc.vmRss), " MB");
  console.log(
    `\n  ${"process.memoryUsage() by thread (before GC | after GC)".padEnd(46)}${["heapTotal", "heapUsed", "external", "arrayBufs"].map((h) => h.padStart(19)).join("")}`,
  );
  for (const thread of m.threads) {
    const cell = (k: keyof Usage) =>
      `${mb(thread.before[k]).trim()} | ${mb(thread.after[k]).trim()}`.padStart(19);
    row(thread.name, cell("heapTotal"), cell("heapUsed"), cell("external"), cell("arrayBuffers"));
  }
  const heaps = m.threads.reduce((n, t) => n + t.after.heapTotal, 0);
  const externals = m.threads.reduce((n, t) => n + t.after.external, 0);
  const liteSvm = svm.fixed + accounts * svm.nativePerAccount;
  const native = afterGc.rssAnon - heaps - externals;
  console.log("\n  by part (after GC; MB)");
  row("V8 heaps, every isolate (heapTotal)", mb(heaps));
  for (const thread of m.threads) row(`  ${thread.name} (heapTotal)`, mb(thread.after.heapTotal));
  row("external to V8 (Buffers, ArrayBuffers; all)", mb(externals));
  row("native, not V8: RssAnon - heaps - external", mb(native));
  row(
    `  LiteSVM: ${mb(svm.fixed).trim()} MB + ${accounts} accts x ${svm.nativePerAccount.toFixed(0)} B`,
    mb(liteSvm),
  );
  row("  rest: SQLite caches, malloc, stacks, code", mb(native - liteSvm));
  row("file-backed (node binary, .so, mapped files)", mb(afterGc.rssFile));
}

async function runOne(label: string, prepare: (dataDir: string) => void): Promise<void> {
  console.log(`\n=== ${label}`);
  const dataDir = tempDataDir();
  const diagnostics = tempDataDir();
  const inspectPort = pickPort(24_000);
  const previousFlags = process.env.BENCH_NODE_FLAGS;
  process.env.BENCH_NODE_FLAGS = [...serverNodeFlags(), `--inspect-port=127.0.0.1:${inspectPort}`].join(" ");
  try {
    const started = performance.now();
    prepare(dataDir);
    console.log(
      `  [${elapsed()}] catalogue imported in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const calibration = liteSvmPerAccount(100_000);
    const passes: [string, Record<string, string>][] = [["first start", {}]];
    if (!args["no-restart"]) {
      passes.push(["restart", {}]);
      // Without the embedded simulator (and so without its copy of the demo catalogue) and the sync.
      passes.push([
        "restart, no simulator, no sync",
        { UPSTREAM_URL: "http://127.0.0.1:9", SYNC_INTERVAL: "0" },
      ]);
    }
    for (const [pass, env] of passes) {
      const server = await startServer({ dataDir, env });
      let inspector: Inspector | undefined;
      try {
        // As bench/http.ts does: lazily built sort orders count toward memory.
        await fetch(`${server.url}/api/v1/events?sort=volume&limit=200`);
        await fetch(`${server.url}/api/v1/markets?sort=volume&limit=200`);
        if (Number(args.settle) > 0) await sleep(Number(args.settle) * 1000);
        console.log(
          `  [${elapsed()}] ${pass}: ready in ${(server.readyMs / 1000).toFixed(2)} s; measuring${Number(args.settle) > 0 ? ` ${args.settle} s later` : ""}`,
        );
        const { m, inspector: connected } = await measure(server, inspectPort);
        inspector = connected;
        const afterGc = procStatus(server.child.pid as number);
        const trimmed = args["no-trim"] ? null : mallocTrim(server.child.pid as number);
        await snapshotHeap(inspector, pass === "first start", diagnostics);
        const storage = storageFigures(dataDir);
        const svm = await calibration;
        console.log(
          `\n--- ${pass} (the chain ${pass === "first start" ? "created by genesis" : "loaded from storage"}): ready in ${(server.readyMs / 1000).toFixed(2)} s`,
        );
        printMeasured(m, afterGc, storage.accounts, svm);
        if (trimmed) {
          row(
            "glibc malloc_trim(0) (gdb): VmRSS before / after",
            mb(trimmed.before),
            " MB",
            mb(trimmed.after),
            " MB",
          );
          row("  freed-but-kept malloc memory (released)", mb(trimmed.before - trimmed.after), " MB");
        }
        if (pass === "first start") printStorage(storage, svm);
      } finally {
        inspector?.close();
        await stopServer(server);
        console.log(`  [${elapsed()}] ${pass}: server stopped`);
      }
    }
  } finally {
    if (previousFlags === undefined) delete process.env.BENCH_NODE_FLAGS;
    else process.env.BENCH_NODE_FLAGS = previousFlags;
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(diagnostics, { recursive: true, force: true });
  }
}

/** VmRSS before and after calling glibc's malloc_trim(0) in the server through gdb; null without gdb. */
function mallocTrim(pid: number): { before: number; after: number } | null {
  const before = procStatus(pid).vmRss;
  try {
    execFileSync("gdb", ["-p", String(pid), "-batch", "-nx", "-ex", "call (int) malloc_trim(0)"], {
      stdio: "ignore",
      timeout: 60_000,
    });
  } catch {
    return null;
  }
  return { before, after: procStatus(pid).vmRss };
}

/** Takes and summarizes the heap snapshot (first start only), while the server still runs. */
async function snapshotHeap(inspector: Inspector, snapshot: boolean, dir: string): Promise<void> {
  if (!snapshot || args["no-snapshot"]) return;
  const file = path.join(dir, "main.heapsnapshot");
  const started = performance.now();
  console.log(`  [${elapsed()}] taking the heap snapshot`);
  const bytes = await takeHeapSnapshot(inspector, file, Number(args["snapshot-timeout"]) * 1000);
  const takenMs = performance.now() - started;
  const summary = summarizeSnapshot(file);
  fs.rmSync(file);
  console.log(
    `\n  main-thread heap snapshot: ${summary.nodes} nodes, ${summary.edges} edges, ${mb(summary.totalSelf).trim()} MB of self sizes;` +
      ` ${mb(bytes).trim()} MB of JSON taken in ${(takenMs / 1000).toFixed(1)} s, parsed in ${(summary.parseMs / 1000).toFixed(1)} s`,
  );
  console.log(
    `  ${"top constructors by self + solely-held arrays".padEnd(46)}${"owned MB".padStart(10)}${"self MB".padStart(10)}${"count".padStart(10)}`,
  );
  for (const group of summary.byConstructor.slice(0, TOP)) {
    const held = summary.holders.get(group.name);
    if (held) {
      row(
        group.name.slice(0, 45),
        mb(group.owned).padStart(10),
        mb(group.self).padStart(10),
        String(group.count).padStart(10),
        `   held by: ${held.map((h) => `${h.name} ${mb(h.self).trim()} MB/${h.count}`).join("; ")}`,
      );
      continue;
    }
    row(
      group.name.slice(0, 45),
      mb(group.owned).padStart(10),
      mb(group.self).padStart(10),
      String(group.count).padStart(10),
    );
  }
  console.log(`  ${"by node type".padEnd(46)}${"self MB".padStart(10)}${"count".padStart(10)}`);
  for (const group of summary.byType.slice(0, 10)) {
    row(group.name, mb(group.self).padStart(10), String(group.count).padStart(10));
  }
  console.log(`  ${"strings by family".padEnd(46)}${"self MB".padStart(10)}${"count".padStart(10)}`);
  for (const group of summary.strings)
    row(group.name, mb(group.self).padStart(10), String(group.count).padStart(10));
}

function printStorage(storage: StorageFigures, svm: Calibration): void {
  console.log("\n  SQLite (after the first start)");
  row("database file / WAL", mb(storage.dbBytes), " MB", mb(storage.walBytes), " MB");
  row("chain_accounts rows", String(storage.accounts).padStart(8));
  row("  data (base64 text) / addresses", mb(storage.dataBytes), " MB", mb(storage.addressBytes), " MB");
  row(
    "LiteSVM, empty / native per account",
    `${mb(svm.fixed).trim()} MB`.padStart(8),
    `${svm.nativePerAccount.toFixed(0)} B`.padStart(8),
  );
  for (const owner of storage.byOwner) {
    row(
      `  owner ${owner.owner.slice(0, 12)}...`,
      String(owner.count).padStart(8),
      " rows",
      mb(owner.dataBytes),
      " MB",
    );
  }
  for (const length of storage.byDataLength) {
    row(`  data length ${length.length} (base64 chars)`, String(length.count).padStart(8), " rows");
  }
  row("chain_transactions rows", String(storage.transactions).padStart(8));
  for (const table of storage.tables) row(`  dbstat ${table.name.slice(0, 36)}`, mb(table.bytes), " MB");
}

async function main(): Promise<void> {
  if (args.calibrate) return calibrate(Number(args.calibrate));
  if (!fs.existsSync(MAIN)) throw new Error("dist/cli/main.js is missing: run `npm run build` first");
  // Machines differ several-fold: the figures below are read against this machine's baselines.
  console.log(`baselines: ${await machineBaselines()}`);
  if (args.demo) {
    const catalogue = generateDemoCatalogue({ anchor: ANCHOR, scale: 1 });
    const markets = catalogue.events.reduce((n, e) => n + e.markets.length, 0);
    await runOne(`demo catalogue: ${catalogue.events.length} events / ${markets} markets`, (dir) =>
      importCatalogue(dir, catalogue),
    );
    return;
  }
  const events = Number(args.events);
  const large = generateDemoCatalogue({ anchor: ANCHOR, scale: Number(args.scale) });
  const catalogue = sizedCatalogue(large, events, Number(args.markets ?? events * 5));
  const markets = catalogue.events.reduce((n, e) => n + e.markets.length, 0);
  await runOne(`generated catalogue: ${catalogue.events.length} events / ${markets} markets`, (dir) =>
    importCatalogue(dir, catalogue),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
