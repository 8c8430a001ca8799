/** A TCP proxy between a test and a real service (PostgreSQL, Redis), to take the service away as a network or a restart would. */
import net from "node:net";

/** A TCP proxy to a real service that the test can cut (refusing and dropping connections) and restore. */
export class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  /** `dropWhen` sees what each client sends; when it answers true the proxy drops that connection. */
  constructor(
    private readonly target: { host: string; port: number },
    private readonly dropWhen: (fromClient: Buffer) => boolean = () => false,
  ) {}

  /** Listens (again on the same port once it has been opened before). */
  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on("data", (chunk: Buffer) => {
        if (!this.dropWhen(chunk)) return void upstream.write(chunk);
        client.destroy();
        upstream.destroy();
      });
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and drops the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

/** `url` with its host and port replaced by the proxy's. */
export function proxied(url: string, proxy: CuttableProxy): string {
  const target = new URL(url);
  target.hostname = "127.0.0.1";
  target.port = String(proxy.port);
  return target.toString();
}

/** The host and port `url` names. */
export function targetOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}
