/**
 * Query history from SYSLOG.QueryLog (a user sees their own statements, administrators all), re-run
 * with one click. On a phone each statement is a card (styles.css, table.cards).
 */
import { useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { CONSOLE_MARK, consoleSql } from '../lib/catalog.js';
import { cellText, duration } from '../lib/format.js';
import { Num } from '../lib/json.js';
import { sqlLiteral } from '../lib/sql.js';
import { ErrorBox, useLoad } from './common.js';

export function History({ api, openInEditor }: { api: Api; openInEditor: (sql: string, run: boolean) => void }) {
  const [own, setOwn] = useState(false);
  const [mine, setMine] = useState(true);
  const [search, setSearch] = useState('');
  // The search runs in vdb over the whole log, not over the 200 rows shown; strpos takes the text
  // as it is (no LIKE wildcards to escape).
  const pattern = search.trim() ? ` AND strpos(lower("Statement"), lower(${sqlLiteral(search.trim())})) > 0` : '';
  const log = useLoad(
    () =>
      api.query(
        consoleSql(
          `SELECT "ID", "UserName", "StartTime", "DurationMs", "RowCount", "Status", "Error", "Statement" FROM SYSLOG.QueryLog` +
            ` WHERE true${own ? '' : ` AND "Statement" NOT LIKE ${sqlLiteral(`${CONSOLE_MARK}%`)}`}${mine ? ' AND "UserName" = CURRENT_USER' : ''}${pattern}` +
            ` ORDER BY "ID" DESC LIMIT 200`,
        ),
      ),
    [api, own, mine, pattern],
  );
  return (
    <div class="history">
      <div class="section-head">
        <h1>Query history</h1>
        <input
          type="search"
          placeholder="Search statements"
          aria-label="Search statements"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          data-testid="history-search"
        />
        <label class="inline">
          <input type="checkbox" checked={mine} onChange={(e) => setMine(e.currentTarget.checked)} /> Only mine
        </label>
        <label class="inline">
          <input type="checkbox" checked={own} onChange={(e) => setOwn(e.currentTarget.checked)} /> Show the console's own statements
        </label>
        <button type="button" onClick={log.reload}>
          Reload
        </button>
      </div>
      <ErrorBox error={log.error} />
      <div class="table-wrap">
        <table class="data cards" aria-label="Statements">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">User</th>
              <th scope="col">Statement</th>
              <th scope="col">Status</th>
              <th scope="col">Rows</th>
              <th scope="col">Time</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(log.value?.rows ?? []).map(([id, user, start, ms, rows, status, error, statement]) => {
              const sql = String(statement ?? '');
              // Secrets are stored as *** (docs/sql.md#syslogquerylog): such a statement cannot run as it is.
              const redacted = sql.includes("'***'") || sql.includes('=***');
              return (
                <tr key={String(id)}>
                  <td class="nowrap" data-label="Started">
                    {cellText(start)}
                  </td>
                  <td data-label="User">{cellText(user)}</td>
                  <td class="statement">
                    <pre class="sql inline-sql">{sql}</pre>
                    {error !== null && <div class="error-text">{cellText(error)}</div>}
                  </td>
                  <td class={`status ${String(status)}`} data-label="Status">
                    {cellText(status)}
                  </td>
                  <td class="num" data-label="Rows">
                    {cellText(rows)}
                  </td>
                  <td class="num nowrap" data-label="Time">
                    {ms instanceof Num ? duration(Number(ms)) : cellText(ms)}
                  </td>
                  <td class="actions">
                    <button
                      type="button"
                      onClick={() => openInEditor(sql, !redacted)}
                      title={redacted ? 'Secrets were redacted: edit before running' : undefined}
                    >
                      {redacted ? 'Edit' : 'Re-run'}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {log.value?.rows.length === 0 && <p class="muted">{pattern ? 'No statement matches.' : 'No statements yet.'}</p>}
    </div>
  );
}
