/** The server secrets in the catalog database (the `secrets` row), for instances sharing it. */
import type pg from 'pg';
import { decodeStored, encodeStored, newStoredSecrets, type SecretsStore, type StoredSecrets } from './server-secrets.js';
import { quoteIdent } from './postgres-schema.js';

interface SecretsRow {
  server_secret: string;
  encryption_key: string;
  security_epoch: number;
  rotating_to: number | null;
  previous_encryption_key: string | null;
}

export class PostgresSecretsStore implements SecretsStore {
  private readonly s: string;

  constructor(
    private readonly pool: pg.Pool | pg.ClientBase,
    schema: string,
  ) {
    this.s = quoteIdent(schema);
  }

  async loadOrCreate(): Promise<StoredSecrets> {
    // The first instance to start creates them; the others read the same row.
    await this.upsert(newStoredSecrets(), 'DO NOTHING');
    const { rows } = await this.pool.query<SecretsRow>(
      `SELECT server_secret, encryption_key, security_epoch, rotating_to, previous_encryption_key FROM ${this.s}.secrets WHERE id = 1`,
    );
    const row = rows[0]!;
    return decodeStored(
      {
        serverSecret: row.server_secret,
        encryptionKey: row.encryption_key,
        securityEpoch: row.security_epoch,
        rotatingTo: row.rotating_to,
        previousEncryptionKey: row.previous_encryption_key,
      },
      `${this.s}.secrets`,
    );
  }

  async write(stored: StoredSecrets): Promise<void> {
    await this.upsert(
      stored,
      'DO UPDATE SET server_secret = excluded.server_secret, encryption_key = excluded.encryption_key, security_epoch = excluded.security_epoch, rotating_to = excluded.rotating_to, previous_encryption_key = excluded.previous_encryption_key',
    );
  }

  /** Writes `stored` as the row (a client in a transaction writes in that transaction). */
  async upsert(stored: StoredSecrets, onConflict: string): Promise<void> {
    const encoded = encodeStored(stored);
    await this.pool.query(
      `INSERT INTO ${this.s}.secrets (id, server_secret, encryption_key, security_epoch, rotating_to, previous_encryption_key)
       VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (id) ${onConflict}`,
      [
        encoded.serverSecret,
        encoded.encryptionKey,
        encoded.securityEpoch,
        encoded.rotatingTo ?? null,
        encoded.previousEncryptionKey ?? null,
      ],
    );
  }
}
