/**
 * A connection's start: SSLRequest (TLS when a certificate is configured, else 'N'), the
 * protocol 3.0 start-up packet, a CancelRequest on a connection of its own, and the sign-in.
 * Sign-in (checkSignIn) is SCRAM-SHA-256 against the verifier vdb keeps beside each password's
 * scrypt hash, or a cleartext password where no verifier exists yet and for API keys; either
 * only over TLS or on a loopback listener (or where the configuration allows it). Sign-ins are
 * throttled, locked out and audited as REST's Basic sign-in; users who sign in elsewhere
 * (external identities) are refused, as REST refuses them.
 */
import type { SecureContext } from 'node:tls';
import { ApiError } from '../errors.js';
import { signInKeys } from '../security/throttle.js';
import type { Services } from '../services.js';
import { BodyReader, CANCEL_REQUEST, GSSENC_REQUEST, MessageWriter, PROTOCOL_3, SSL_REQUEST } from './codec.js';
import type { Connection } from './connection.js';
import { WireError } from './errors.js';
import type { Caller } from './run-statement.js';
import { parseVerifier } from '../security/scram.js';
import { decoyVerifier, scramExchange } from './scram.js';

export interface StartOptions {
  /** The certificate's context; null: SSLRequest is answered 'N'. */
  tls: SecureContext | null;
  /** Password sign-in without TLS is allowed (a loopback listener, or the setting). */
  plainPasswords: boolean;
  /** Cancels the statement of the session with this key, if the key is right. */
  cancel(processId: number, secret: number): void;
}

export interface SignedIn extends Caller {
  /** The start-up packet's parameters (user, database, application_name, client settings). */
  parameters: Map<string, string>;
}

const FATAL = (code: string, message: string, hint: string | null = null) => new WireError(code, message, hint, 'FATAL');

/** Reads the start-up packet (after any SSLRequest); null when the connection was only a cancel or went away. */
async function startupPacket(connection: Connection, options: StartOptions): Promise<Map<string, string> | null> {
  for (;;) {
    const message = await connection.next();
    if (!message) return null;
    const body = new BodyReader(message.body);
    const code = body.int32();
    if (code === SSL_REQUEST && !connection.secure) {
      if (options.tls) await connection.startTls(options.tls);
      else {
        connection.send(Buffer.from('N'));
        await connection.flush();
      }
      continue;
    }
    if (code === GSSENC_REQUEST) {
      connection.send(Buffer.from('N'));
      await connection.flush();
      continue;
    }
    if (code === CANCEL_REQUEST) {
      options.cancel(body.int32(), body.int32());
      return null;
    }
    if (code >> 16 !== PROTOCOL_3 >> 16) {
      throw FATAL('0A000', `unsupported frontend protocol ${code >> 16}.${code & 0xffff}: vdb speaks protocol 3.0`);
    }
    const parameters = new Map<string, string>();
    while (body.remaining > 1) {
      const name = body.cstring();
      parameters.set(name, body.cstring());
    }
    connection.started();
    if ((code & 0xffff) > 0) {
      // A newer minor version: the client is told vdb speaks 3.0 and which options it ignored.
      const unknown = [...parameters.keys()].filter((name) => name.startsWith('_pq_.'));
      const writer = new MessageWriter('v').int32(0).int32(unknown.length);
      for (const name of unknown) writer.cstring(name);
      connection.send(writer.end());
    }
    return parameters;
  }
}

/** Asks for a cleartext password (only over TLS or loopback: checked before). */
async function cleartextPassword(connection: Connection): Promise<string> {
  connection.send(new MessageWriter('R').int32(3).end());
  await connection.flush();
  const message = await connection.next();
  if (!message) throw FATAL('08006', 'the client went away during sign-in');
  if (message.type !== 'p'.charCodeAt(0)) throw FATAL('08P01', 'expected a password message');
  return new BodyReader(message.body).cstring();
}

/** The user name of an API key sign-in: the key's public part, vdb_<id>. */
const API_KEY_USER = /^vdb_([0-9a-f]{16})$/;

/**
 * Checks who signs in, throttled and audited as REST's sign-in: an API key (user name vdb_<id>,
 * the key as the password, in cleartext), a user with a SCRAM verifier (SCRAM-SHA-256), a user
 * without one yet (a cleartext password, which gives them one), an unknown user (SCRAM with a
 * made-up verifier: the same exchange, refused at its end).
 */
async function checkSignIn(services: Services, connection: Connection, name: string): Promise<Caller> {
  const address = connection.remoteAddress;
  const keys = signInKeys(name, address);
  const audit = (outcome: 'refused' | 'failed') =>
    services.auditLog.record({ user: name, action: 'sign-in', target: null, outcome, address });
  try {
    await services.throttle.check(keys);
  } catch (err) {
    audit('refused');
    throw FATAL('28000', err instanceof ApiError ? err.description : 'Too many failed sign-ins.');
  }
  let caller: Caller | null = null;
  const keyId = API_KEY_USER.exec(name)?.[1];
  const known = services.users.find(name);
  const verifier = parseVerifier(known?.scramVerifier);
  if (keyId !== undefined) {
    const key = services.apiKeys.verify(await cleartextPassword(connection));
    const owner = key && key.id === keyId ? services.users.find(key.owner) : undefined;
    if (key && owner) caller = { user: owner, apiKey: { readOnly: key.readOnly } };
  } else if (known?.kind === 'password' && !verifier) {
    const user = await services.users.checkPassword(name, await cleartextPassword(connection));
    if (user) caller = { user, apiKey: null };
  } else if (await scramExchange(connection, verifier ?? decoyVerifier(name))) {
    caller = { user: known!, apiKey: null };
  }
  if (!caller) {
    await services.throttle.fail(keys);
    audit('failed');
    throw FATAL('28P01', `password authentication failed for user "${name}"`);
  }
  await services.throttle.succeed(keys[0]!);
  return caller;
}

/** Runs the start of a connection; null when it ended without a session (a cancel, a client gone). */
export async function startSession(services: Services, connection: Connection, options: StartOptions): Promise<SignedIn | null> {
  const parameters = await startupPacket(connection, options);
  if (!parameters) return null;
  const name = parameters.get('user') ?? '';
  if (name === '') throw FATAL('28000', 'no PostgreSQL user name specified in startup packet');
  const database = parameters.get('database') || name;
  if (database !== services.config.vdbName) {
    throw FATAL('3D000', `database "${database}" does not exist`, `This vdb's database is "${services.config.vdbName}".`);
  }
  if (!connection.secure && !options.plainPasswords) {
    throw FATAL(
      '28000',
      'vdb accepts password sign-in only over TLS on this listener',
      'Connect with sslmode=require (the server needs a certificate: tls in the configuration).',
    );
  }
  const caller = await checkSignIn(services, connection, name);
  if (caller.user.kind !== 'password') throw FATAL('28000', `user "${name}" signs in through an external identity provider`);
  connection.send(new MessageWriter('R').int32(0).end());
  return { ...caller, parameters };
}
