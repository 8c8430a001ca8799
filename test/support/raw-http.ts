/** HTTP over a raw socket, for requests no HTTP client would send: malformed, slow, or endless. */
import net from "node:net";

export interface RawRequestOptions {
  /**
   * Written after the head, one piece every `dripMs`, round and round until the server closes the
   * connection: a string one character at a time, or a list one string at a time.
   */
  drip?: string | readonly string[];
  /** Default 200. */
  dripMs?: number;
  /** Bytes (spaces) written after the head as fast as the server takes them. */
  flood?: number;
}

export interface RawAnswer {
  /** From the status line; 0 when the server closed without answering. */
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** Everything after the head, as received. */
  body: string;
  /** When the server closed the connection, from the connection's start. */
  closedAfterMs: number;
  /** Bytes of `flood` written before the server closed the connection. */
  written: number;
}

/**
 * Writes `head` on a fresh connection to 127.0.0.1:`port`, then `drip` or `flood`, and reads what
 * comes back until the server closes the connection; fails when it has not closed it within 10 s.
 */
export function rawRequest(port: number, head: string, options: RawRequestOptions = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const begun = Date.now();
    let written = 0;
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(head);
      if (options.flood) flood();
    });
    const block = Buffer.alloc(64 * 1024, 0x20);
    const flood = () => {
      while (!socket.destroyed && written < (options.flood ?? 0)) {
        written += block.length;
        if (!socket.write(block)) {
          socket.once("drain", flood);
          return;
        }
      }
    };
    const pieces = typeof options.drip === "string" ? [...options.drip] : (options.drip ?? []);
    let dripped = 0;
    const dripper =
      pieces.length > 0
        ? setInterval(() => {
            if (!socket.destroyed) socket.write(pieces[dripped++ % pieces.length] as string);
          }, options.dripMs ?? 200)
        : undefined;
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {});
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error("the server did not close the connection within 10 s"));
    }, 10_000);
    socket.on("close", () => {
      clearInterval(dripper);
      clearTimeout(giveUp);
      resolve({
        ...parseResponse(Buffer.concat(chunks).toString("utf8")),
        closedAfterMs: Date.now() - begun,
        written,
      });
    });
  });
}

function parseResponse(text: string): Pick<RawAnswer, "status" | "headers" | "body"> {
  const split = text.indexOf("\r\n\r\n");
  const [statusLine = "", ...headerLines] = (split === -1 ? text : text.slice(0, split)).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon !== -1) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(" ")[1] ?? 0),
    headers,
    body: split === -1 ? "" : text.slice(split + 4),
  };
}
