/**
 * The audit log: sign-ins and their failures, changes to users, sources, keys and preferences,
 * who did them, from where, and how they ended. Kept in memory with bounded retention and shown
 * as the system table SYSLOG.AuditLog (this instance's entries); with a PostgreSQL catalog every
 * instance's entries are also written to its audit_log table. Secrets never enter it (arguments
 * are not recorded).
 */
export interface AuditEntry {
  id: number;
  time: string;
  user: string | null;
  action: string;
  target: string | null;
  outcome: 'ok' | 'failed' | 'refused';
  address: string | null;
}

export class AuditLog {
  private entries: AuditEntry[] = [];
  private nextId = 1;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    /** Told of every entry (the catalog database keeps them too when it is PostgreSQL). */
    private readonly onRecord?: (entry: AuditEntry) => void,
  ) {}

  record(entry: Omit<AuditEntry, 'id' | 'time'>): void {
    const recorded = { id: this.nextId++, time: new Date(this.now()).toISOString(), ...entry };
    this.entries.push(recorded);
    this.onRecord?.(recorded);
    if (this.entries.length > this.maxEntries) this.entries = this.entries.slice(-this.maxEntries);
  }

  list(): readonly AuditEntry[] {
    return this.entries;
  }
}
