/**
 * The server's side of a SCRAM-SHA-256 sign-in (RFC 5802 as PostgreSQL speaks it): the
 * AuthenticationSASL offer, the client's first message, the server's nonce, salt and
 * iterations, the client's proof checked against the user's stored verifier, and the server's
 * signature. An unknown user goes through the same exchange with a made-up verifier, so the
 * answer never tells which user names exist.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { checkProof, SCRAM_ITERATIONS, type ScramVerifier } from '../security/scram.js';
import { BodyReader, MessageWriter } from './codec.js';
import type { Connection } from './connection.js';
import { WireError } from './errors.js';

const MECHANISM = 'SCRAM-SHA-256';
const protocolError = (message: string) => new WireError('08P01', message, null, 'FATAL');

/** A process secret for the made-up verifiers: the same salt for a name each time it is asked. */
const decoyKey = randomBytes(32);

/** The verifier an unknown user is challenged with: no proof matches it. */
export function decoyVerifier(name: string): ScramVerifier {
  const salt = createHmac('sha256', decoyKey).update(name).digest().subarray(0, 16);
  return { iterations: SCRAM_ITERATIONS, salt, storedKey: randomBytes(32), serverKey: randomBytes(32) };
}

/** The attributes of a SCRAM message (a=..., b=...); values keep their own '=' signs. */
function attributes(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq === 1) found.set(part[0]!, part.slice(2));
  }
  return found;
}

async function saslMessage(connection: Connection): Promise<Buffer> {
  const message = await connection.next();
  if (!message) throw new WireError('08006', 'the client went away during sign-in', null, 'FATAL');
  if (message.type !== 'p'.charCodeAt(0)) throw protocolError('expected a SASL response');
  return message.body;
}

/** Runs the exchange; true when the client proved it knows the password. */
export async function scramExchange(connection: Connection, verifier: ScramVerifier): Promise<boolean> {
  connection.send(new MessageWriter('R').int32(10).cstring(MECHANISM).byte(0).end());
  await connection.flush();
  const initial = new BodyReader(await saslMessage(connection));
  if (initial.cstring() !== MECHANISM) throw protocolError(`vdb offers only ${MECHANISM}`);
  const clientFirst = initial.bytes(initial.int32()).toString('utf8');
  // gs2 header: n (no channel binding) or y (the client could, the server did not offer it).
  const match = /^([ny]),(?:a=[^,]*)?,(.*)$/.exec(clientFirst);
  if (!match) throw protocolError('malformed SCRAM client-first-message (channel binding is not offered)');
  const gs2Header = clientFirst.slice(0, clientFirst.length - match[2]!.length);
  const clientFirstBare = match[2]!;
  const clientNonce = attributes(clientFirstBare).get('r');
  if (!clientNonce) throw protocolError('the SCRAM client-first-message has no nonce');
  const nonce = clientNonce + randomBytes(18).toString('base64');
  const serverFirst = `r=${nonce},s=${verifier.salt.toString('base64')},i=${verifier.iterations}`;
  connection.send(new MessageWriter('R').int32(11).add(Buffer.from(serverFirst)).end());
  await connection.flush();
  const clientFinal = (await saslMessage(connection)).toString('utf8');
  const proofAt = clientFinal.lastIndexOf(',p=');
  if (proofAt < 0) throw protocolError('the SCRAM client-final-message has no proof');
  const withoutProof = clientFinal.slice(0, proofAt);
  const final = attributes(withoutProof);
  if (final.get('r') !== nonce) throw protocolError('the SCRAM nonce does not match');
  if (final.get('c') !== Buffer.from(gs2Header).toString('base64')) throw protocolError('the SCRAM channel binding does not match');
  const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
  const signature = checkProof(verifier, `${clientFirstBare},${serverFirst},${withoutProof}`, proof);
  if (!signature) return false;
  connection.send(
    new MessageWriter('R')
      .int32(12)
      .add(Buffer.from(`v=${signature.toString('base64')}`))
      .end(),
  );
  return true;
}
