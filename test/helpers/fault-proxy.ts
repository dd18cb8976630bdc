/**
 * A TCP proxy that injects faults between vdb and a real database: it listens on an ephemeral
 * loopback port and forwards to the target, and on command stops forwarding (a hung or
 * partitioned server), cuts every connection (a restart, a failover), or forwards slowly (so
 * that a statement is surely mid-stream when a fault comes).
 */
import net from 'node:net';

interface Pair {
  client: net.Socket;
  server: net.Socket | null;
}

export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private stalled = false;
  private rate: number | null = null;
  /** Text that stalls the connection carrying it to the server (stallOn). */
  private stallText: string | null = null;
  /** Bytes forwarded from the server to vdb so far. */
  bytesDown = 0;

  private constructor(
    private readonly listener: net.Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** A proxy on 127.0.0.1 (ephemeral port) to `port` on `host`. */
  static async start(port: number, host = '127.0.0.1'): Promise<FaultProxy> {
    let proxy: FaultProxy | null = null;
    const listener = net.createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    proxy = new FaultProxy(listener, (listener.address() as net.AddressInfo).port, { host, port });
    return proxy;
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.pairs.size;
  }

  private accept(client: net.Socket): void {
    const pair: Pair = { client, server: null };
    this.pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => this.drop(pair));
    // Stalled: the connection is accepted, and nothing more happens (the server is not even asked).
    client.pause();
    if (!this.stalled) this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    if (pair.server || pair.client.destroyed) return;
    const server = net.connect(this.target.port, this.target.host);
    pair.server = server;
    server.on('error', () => undefined);
    server.on('close', () => this.drop(pair));
    this.forward(pair.client, server, false);
    this.forward(server, pair.client, true);
    pair.client.resume();
  }

  /** Passes `from`'s data to `to`, paused while stalled, throttled while slow, with backpressure. */
  private forward(from: net.Socket, to: net.Socket, down: boolean): void {
    from.on('data', (chunk: Buffer) => {
      if (down) this.bytesDown += chunk.length;
      // The statement that carries the text never reaches the server, nor anything after it.
      if (!down && this.stallText !== null && chunk.includes(this.stallText)) {
        from.pause();
        to.pause();
        return;
      }
      if (this.rate === null) {
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => this.flow(from));
        }
        return;
      }
      // Slow: slices of a tenth of the rate, one each 100 ms.
      from.pause();
      const slice = Math.max(1, Math.floor(this.rate / 10));
      let offset = 0;
      const next = () => {
        if (to.destroyed || from.destroyed) return;
        to.write(chunk.subarray(offset, offset + slice));
        offset += slice;
        if (offset < chunk.length) setTimeout(next, 100);
        else this.flow(from);
      };
      next();
    });
  }

  private flow(socket: net.Socket): void {
    if (!this.stalled && !socket.destroyed) socket.resume();
  }

  private drop(pair: Pair): void {
    pair.client.destroy();
    pair.server?.destroy();
    this.pairs.delete(pair);
  }

  /** Stops forwarding both ways; new connections are accepted and left waiting. */
  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.server?.pause();
    }
  }

  /** Destroys every connection through the proxy (new ones are served as before). */
  cut(): void {
    for (const pair of [...this.pairs]) this.drop(pair);
  }

  /**
   * Stops a connection for good once it sends `text` to the server (e.g. one statement of many):
   * what came before passed, that statement is never answered. null: no such text.
   */
  stallOn(text: string | null): void {
    this.stallText = text;
  }

  /** Forwards at most `bytesPerSec` each way from now on. */
  slow(bytesPerSec: number): void {
    this.rate = bytesPerSec;
  }

  /** Forwards normally again: at full speed, and the connections that waited get through. */
  resume(): void {
    this.stalled = false;
    this.rate = null;
    for (const pair of this.pairs) {
      if (pair.server) {
        pair.client.resume();
        pair.server.resume();
      } else this.connectUpstream(pair);
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }
}
