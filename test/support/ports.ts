/**
 * Fixed ports for tests that must name them before a process binds (a venue restarted on the same
 * ports, the chain's PubSub at RPC_PORT + 1). They are drawn below the kernel's ephemeral range, so
 * no outgoing connection of a parallel test can take them between the check and the bind, and each
 * run of `count` consecutive ports is checked free by binding it.
 */
import { once } from "node:events";
import { createServer } from "node:net";

const LOWEST = 10_000;
const BELOW_EPHEMERAL = 32_000;

/** The first of `count` consecutive free ports on 127.0.0.1. */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const first = LOWEST + Math.floor(Math.random() * (BELOW_EPHEMERAL - LOWEST - count));
    if (await allFree(first, count)) return first;
  }
  throw new Error(`no run of ${count} free ports below ${BELOW_EPHEMERAL}`);
}

async function allFree(first: number, count: number): Promise<boolean> {
  const servers = [];
  try {
    for (let port = first; port < first + count; port += 1) {
      const server = createServer();
      servers.push(server);
      const bound = new Promise<boolean>((resolve) => {
        server.once("listening", () => resolve(true));
        server.once("error", () => resolve(false));
      });
      server.listen(port, "127.0.0.1");
      if (!(await bound)) return false;
    }
    return true;
  } finally {
    await Promise.all(servers.filter((server) => server.listening).map((server) => closed(server)));
  }
}

async function closed(server: ReturnType<typeof createServer>): Promise<void> {
  server.close();
  await once(server, "close");
}
