/** The MCP server on stdio, for desktop agents: one server for the connection, until stdin ends. */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { buildMcpServer } from "./server.js";
import type { VenueAccess } from "./venue-access.js";

/** Serves `venue` over `stdin`/`stdout` until the client closes stdin (or `stopped` settles). */
export async function serveStdio(
  venue: VenueAccess,
  io: { stdin: Readable; stdout: Writable; stopped?: Promise<unknown> },
): Promise<void> {
  const server = buildMcpServer(venue);
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const ended = new Promise<void>((resolve) => {
    io.stdin.once("end", resolve);
    io.stdin.once("close", resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await Promise.race([ended, ...(io.stopped ? [io.stopped] : [])]);
  await server.close();
}
