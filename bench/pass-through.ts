/**
 * The least a Node.js server between pgbench and PostgreSQL can cost (bench/pgwire.ts): a TCP
 * proxy that passes each client's bytes to a connection of its own to PostgreSQL and back,
 * reading nothing. What PostgreSQL answers through it bounds any Node.js listener on the same
 * machine, since vdb's listener does the same reads and writes per lookup, and more.
 *
 * Usage: node dist/bench/pass-through.js <target port>   (prints "listening on <port>")
 */
import net from 'node:net';

const target = Number(process.argv[2] ?? 5432);
const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host: '127.0.0.1', port: target }, () => upstream.setNoDelay(true));
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on ${(server.address() as net.AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
