/**
 * The sandbox's Solana PubSub WebSocket (default :8900): `signatureSubscribe`, `accountSubscribe`,
 * `slotSubscribe` and their unsubscribes, with notifications shaped as a validator sends them.
 * Signatures notify once, on commit (or at once if already committed), then end their subscription.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Address, Signature } from "@solana/kit";
import { type WebSocket, WebSocketServer } from "ws";
import { ChainError, RPC_ERROR } from "../errors.js";
import { decodeMint } from "../token-layout.js";
import { type AccountEncoding, encodeAccount } from "./rpc-encoding.js";
import { type CommitEvent, decodeAddress, type SandboxChain } from "./sandbox-chain.js";
import { SLOT_MS } from "./slot-clock.js";

type Subscription =
  | { kind: "signature"; socket: WebSocket; signature: string }
  | { kind: "account"; socket: WebSocket; address: Address; encoding: AccountEncoding }
  | { kind: "slot"; socket: WebSocket };

const NOTIFICATION_METHOD = {
  signature: "signatureNotification",
  account: "accountNotification",
  slot: "slotNotification",
};
const UNSUBSCRIBE = {
  signatureUnsubscribe: "signature",
  accountUnsubscribe: "account",
  slotUnsubscribe: "slot",
} as const;

export interface PubSubServer {
  port: number;
  close(): Promise<void>;
}

/** Starts the PubSub WebSocket server for `chain` on `host:port` (0 picks a free port). */
export async function startPubSubServer(
  chain: SandboxChain,
  host: string,
  port: number,
): Promise<PubSubServer> {
  const server = http.createServer((_request, response) => {
    response.writeHead(426, { "content-type": "text/plain" }).end("WebSocket upgrade required");
  });
  const wss = new WebSocketServer({ server });
  const subscriptions = new Map<number, Subscription>();
  const bySignature = new Map<string, Set<number>>();
  let nextId = 0;

  const send = (socket: WebSocket, message: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const notify = (id: number, subscription: Subscription, result: unknown) =>
    send(subscription.socket, {
      jsonrpc: "2.0",
      method: NOTIFICATION_METHOD[subscription.kind],
      params: { result, subscription: id },
    });
  const remove = (id: number) => {
    const subscription = subscriptions.get(id);
    if (!subscription) return false;
    subscriptions.delete(id);
    if (subscription.kind === "signature") bySignature.get(subscription.signature)?.delete(id);
    return true;
  };
  const decimalsOf = (mint: Address) => {
    const account = chain.peekAccount(mint);
    return account ? decodeMint(mint, account.owner, account.data)?.decimals : undefined;
  };
  const accountValue = (address: Address, encoding: AccountEncoding) => {
    const account = chain.peekAccount(address) ?? {
      lamports: 0n,
      owner: "11111111111111111111111111111111" as Address,
      data: new Uint8Array(0),
      executable: false,
    };
    return encodeAccount(address, account, encoding, decimalsOf);
  };

  const onCommit = (event: CommitEvent) => {
    const context = { slot: Number(event.slot) };
    for (const tx of event.transactions) {
      const ids = bySignature.get(tx.signature);
      if (!ids) continue;
      for (const id of ids) {
        const subscription = subscriptions.get(id);
        if (subscription) notify(id, subscription, { context, value: { err: tx.err } });
        subscriptions.delete(id);
      }
      bySignature.delete(tx.signature);
    }
    for (const [id, subscription] of subscriptions) {
      if (subscription.kind === "account" && event.accounts.has(subscription.address)) {
        notify(id, subscription, {
          context,
          value: accountValue(subscription.address, subscription.encoding),
        });
      }
    }
  };
  const stopListening = chain.onCommit(onCommit);

  let lastSlot = await chain.getSlot();
  const ticker = setInterval(() => {
    void chain.getSlot().then((slot) => {
      if (slot === lastSlot) return;
      lastSlot = slot;
      for (const [id, subscription] of subscriptions) {
        if (subscription.kind === "slot") {
          const current = Number(slot);
          notify(id, subscription, { parent: Math.max(0, current - 1), root: current, slot: current });
        }
      }
    });
  }, SLOT_MS / 4);
  ticker.unref();

  const subscribe = async (
    socket: WebSocket,
    method: string,
    params: unknown[],
  ): Promise<number | boolean> => {
    const unsubscribeKind = UNSUBSCRIBE[method as keyof typeof UNSUBSCRIBE];
    if (unsubscribeKind) {
      const id = params[0];
      if (typeof id !== "number")
        throw ChainError.invalidParams("Invalid params: expected a subscription id");
      const subscription = subscriptions.get(id);
      if (!subscription || subscription.kind !== unsubscribeKind || subscription.socket !== socket) {
        throw ChainError.invalidParams("Invalid subscription id.");
      }
      return remove(id);
    }
    const id = nextId++;
    if (method === "slotSubscribe") {
      subscriptions.set(id, { kind: "slot", socket });
    } else if (method === "accountSubscribe") {
      const address = params[0];
      if (typeof address !== "string") throw ChainError.invalidParams("Invalid params: expected a pubkey");
      decodeAddress(address);
      const config = (params[1] ?? {}) as { encoding?: AccountEncoding };
      subscriptions.set(id, {
        kind: "account",
        socket,
        address: address as Address,
        encoding: config.encoding ?? "base64",
      });
    } else if (method === "signatureSubscribe") {
      const signature = params[0];
      if (typeof signature !== "string")
        throw ChainError.invalidParams("Invalid params: expected a signature");
      const [status] = await chain.getSignatureStatuses([signature as Signature]);
      if (status) {
        // Already committed: a validator notifies at once (after the subscription id) and ends it.
        setImmediate(() =>
          send(socket, {
            jsonrpc: "2.0",
            method: "signatureNotification",
            params: {
              result: { context: { slot: Number(status.slot) }, value: { err: status.err } },
              subscription: id,
            },
          }),
        );
        return id;
      }
      subscriptions.set(id, { kind: "signature", socket, signature });
      let ids = bySignature.get(signature);
      if (!ids) {
        ids = new Set();
        bySignature.set(signature, ids);
      }
      ids.add(id);
    } else {
      throw new ChainError(RPC_ERROR.methodNotFound, "Method not found");
    }
    return id;
  };

  wss.on("connection", (socket) => {
    socket.on("message", (raw) => {
      let request: { id?: unknown; method?: unknown; params?: unknown };
      try {
        request = JSON.parse(raw.toString());
      } catch {
        send(socket, {
          jsonrpc: "2.0",
          error: { code: RPC_ERROR.parseError, message: "Parse error" },
          id: null,
        });
        return;
      }
      const id = typeof request?.id === "number" || typeof request?.id === "string" ? request.id : null;
      // Notifications (no id), such as web3.js's keep-alive pings, get no answer.
      if (id === null) return;
      if (typeof request.method !== "string") {
        send(socket, {
          jsonrpc: "2.0",
          error: { code: RPC_ERROR.invalidRequest, message: "Invalid request" },
          id,
        });
        return;
      }
      const params = Array.isArray(request.params) ? request.params : [];
      subscribe(socket, request.method, params).then(
        (result) => send(socket, { jsonrpc: "2.0", result, id }),
        (error: unknown) => {
          const body =
            error instanceof ChainError
              ? { code: error.code, message: error.message }
              : { code: RPC_ERROR.internalError, message: "Internal error" };
          send(socket, { jsonrpc: "2.0", error: body, id });
        },
      );
    });
    socket.on("close", () => {
      for (const [id, subscription] of subscriptions) if (subscription.socket === socket) remove(id);
    });
    socket.on("error", () => socket.terminate());
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      clearInterval(ticker);
      stopListening();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
