/**
 * One client's socket as a sequence of messages: `next()` answers the client's messages one at
 * a time (the session handles each before it reads the next), `send` queues the server's, which
 * leave in writes of some kilobytes; `flush` waits while the socket's buffer is full, so a slow
 * client holds back the rows rather than filling the server's memory.
 */
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { MessageReader, type ClientMessage } from './codec.js';

/** Bytes gathered before they are written. */
const WRITE_BYTES = 64 * 1024;
/** Messages read ahead of the session before the socket is paused. */
const READ_AHEAD = 256;

export class Connection {
  private readonly reader = new MessageReader();
  private readonly queue: ClientMessage[] = [];
  private waiting: ((message: ClientMessage | null) => void) | null = null;
  private outgoing: Buffer[] = [];
  private outgoingBytes = 0;
  private failure: Error | null = null;
  private ended = false;
  /** Aborted when the client is gone (closed, reset, a protocol fault). */
  readonly gone = new AbortController();

  constructor(
    private socket: Socket,
    /** Whether the connection came over TLS. */
    public secure = false,
  ) {
    this.attach(socket);
  }

  get remoteAddress(): string {
    return this.socket.remoteAddress ?? '';
  }

  private readonly onData = (chunk: Buffer) => {
    this.reader.push(chunk);
    try {
      for (let message = this.reader.next(); message; message = this.reader.next()) this.deliver(message);
    } catch (err) {
      this.failure = err as Error;
      this.destroy();
    }
    if (this.queue.length > READ_AHEAD) this.socket.pause();
  };

  private readonly onEnd = () => this.finish();

  private attach(socket: Socket): void {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    socket.on('close', this.onEnd);
    socket.on('error', this.onEnd);
  }

  private deliver(message: ClientMessage): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(message);
    } else this.queue.push(message);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.gone.abort();
    this.waiting?.(null);
    this.waiting = null;
  }

  /** After the start-up packet: messages carry a type byte. */
  started(): void {
    this.reader.started = true;
  }

  /** The next message, or null once the client is gone. */
  next(): Promise<ClientMessage | null> {
    const message = this.queue.shift();
    if (this.queue.length <= READ_AHEAD / 2 && this.socket.isPaused()) this.socket.resume();
    if (message) return Promise.resolve(message);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** Queues a message; written when enough is gathered or at `flush`. */
  send(message: Buffer): void {
    this.outgoing.push(message);
    this.outgoingBytes += message.length;
  }

  /** Whether enough is queued to be worth a write. */
  get full(): boolean {
    return this.outgoingBytes >= WRITE_BYTES;
  }

  /** Writes what is queued; waits while the client does not read (backpressure). */
  async flush(): Promise<void> {
    if (this.outgoing.length === 0 || this.ended) return;
    const bytes = this.outgoing.length === 1 ? this.outgoing[0]! : Buffer.concat(this.outgoing, this.outgoingBytes);
    this.outgoing = [];
    this.outgoingBytes = 0;
    if (this.socket.write(bytes)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.gone.signal.removeEventListener('abort', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.gone.signal.addEventListener('abort', done);
    });
  }

  /** Answers the client's SSLRequest with 'S' and continues over TLS. */
  async startTls(context: SecureContext): Promise<void> {
    const plain = this.socket;
    plain.off('data', this.onData);
    plain.off('close', this.onEnd);
    plain.off('error', this.onEnd);
    plain.write('S');
    const secure = new TLSSocket(plain, { isServer: true, secureContext: context });
    await new Promise<void>((resolve, reject) => {
      secure.once('secure', resolve);
      secure.once('error', reject);
    });
    this.secure = true;
    this.attach(secure);
  }

  /** Writes the rest, then closes. */
  async close(): Promise<void> {
    await this.flush();
    this.socket.end();
    this.finish();
  }

  destroy(): void {
    this.socket.destroy();
    this.finish();
  }

  get protocolFault(): Error | null {
    return this.failure;
  }
}
