/**
 * The statements a session answers itself: SET, SHOW and RESET of its settings (settings.ts),
 * BEGIN, COMMIT and ROLLBACK as clients send them, DISCARD and DEALLOCATE. vdb runs no
 * transactions: a block is accepted so that clients that open one to read (JDBC without
 * autocommit, for fetch sizes) work, and writes inside a block are refused (session.ts), since
 * a ROLLBACK could not undo them.
 */
import type { Node } from '@pgsql/types';
import { WireError } from './errors.js';
import type { SessionSettings } from './settings.js';

/** What a session command answers: rows of text columns (SHOW), its tag, settings changed. */
export interface CommandAnswer {
  columns: string[] | null;
  rows: string[][];
  tag: string;
  reported: Array<[string, string]>;
}

/** The state a command changes besides the settings. */
export interface SessionState {
  settings: SessionSettings;
  /** 'idle', in a block, or in a block that failed (until COMMIT or ROLLBACK). */
  block: 'idle' | 'open' | 'failed';
  /** Forgets prepared statements (null: all). */
  deallocate(name: string | null): void;
}

const tagOnly = (tag: string, reported: Array<[string, string]> = []): CommandAnswer => ({ columns: null, rows: [], tag, reported });

/** The text of a SET value: constants as written, lists joined by ", ". */
function valueText(args: readonly Node[] | undefined): string {
  return (args ?? [])
    .map((arg) => {
      const constant =
        'A_Const' in arg
          ? arg.A_Const
          : 'TypeCast' in arg && arg.TypeCast.arg && 'A_Const' in arg.TypeCast.arg
            ? arg.TypeCast.arg.A_Const
            : null;
      if (!constant) throw new WireError('0A000', 'vdb takes only constants as setting values.');
      if (constant.sval) return constant.sval.sval ?? '';
      if (constant.ival) return String(constant.ival.ival ?? 0);
      if (constant.fval) return constant.fval.fval ?? '';
      if (constant.boolval) return constant.boolval.boolval ? 'on' : 'off';
      return '';
    })
    .join(', ');
}

function setting(node: Extract<Node, { VariableSetStmt: unknown }>['VariableSetStmt'], state: SessionState): CommandAnswer {
  const name = node.name ?? '';
  switch (node.kind) {
    case 'VAR_SET_VALUE': {
      // SET TIME ZONE 'UTC' arrives as the setting "timezone".
      const changed = state.settings.set(name, valueText(node.args));
      return tagOnly('SET', changed ? [changed] : []);
    }
    case 'VAR_SET_DEFAULT':
    case 'VAR_RESET':
      return tagOnly(node.kind === 'VAR_RESET' ? 'RESET' : 'SET', state.settings.reset(name));
    case 'VAR_RESET_ALL':
      return tagOnly('RESET', state.settings.reset(null));
    case 'VAR_SET_MULTI':
      // SET TRANSACTION / SESSION CHARACTERISTICS: vdb runs no transactions, reads see the sources' committed rows.
      if (/^transaction|^session characteristics/i.test(name)) return tagOnly('SET');
      throw new WireError('0A000', `vdb cannot SET ${name}.`);
    default:
      throw new WireError('0A000', `vdb cannot SET ${name} this way.`);
  }
}

function show(name: string, state: SessionState): CommandAnswer {
  if (name.toLowerCase() === 'all') {
    return {
      columns: ['name', 'setting', 'description'],
      rows: state.settings.all().map(([n, v]) => [n, v, '']),
      tag: 'SHOW',
      reported: [],
    };
  }
  const value = state.settings.get(name);
  if (value === null) throw new WireError('42704', `unrecognized configuration parameter "${name}"`);
  return { columns: [name.toLowerCase()], rows: [[value]], tag: 'SHOW', reported: [] };
}

function transaction(kind: string | undefined, state: SessionState): CommandAnswer {
  switch (kind) {
    case 'TRANS_STMT_BEGIN':
    case 'TRANS_STMT_START':
      // Inside a block PostgreSQL warns and goes on; so does vdb, without the warning.
      if (state.block === 'idle') state.block = 'open';
      return tagOnly(kind === 'TRANS_STMT_BEGIN' ? 'BEGIN' : 'START TRANSACTION');
    case 'TRANS_STMT_COMMIT': {
      const failed = state.block === 'failed';
      state.block = 'idle';
      return tagOnly(failed ? 'ROLLBACK' : 'COMMIT');
    }
    case 'TRANS_STMT_ROLLBACK':
      state.block = 'idle';
      return tagOnly('ROLLBACK');
    default:
      throw new WireError('0A000', 'vdb runs no transactions: savepoints and prepared transactions are not supported.');
  }
}

/** Answers a session command. */
export function sessionCommand(node: Node, state: SessionState): CommandAnswer {
  if ('TransactionStmt' in node) return transaction(node.TransactionStmt.kind, state);
  if (state.block === 'failed') throw abortedBlock();
  if ('VariableSetStmt' in node) return setting(node.VariableSetStmt, state);
  if ('VariableShowStmt' in node) return show(node.VariableShowStmt.name ?? '', state);
  if ('DiscardStmt' in node) {
    state.deallocate(null);
    state.settings.reset(null);
    return tagOnly(`DISCARD ${(node.DiscardStmt.target ?? 'DISCARD_ALL').replace('DISCARD_', '')}`);
  }
  if ('DeallocateStmt' in node) {
    state.deallocate(node.DeallocateStmt.isall || !node.DeallocateStmt.name ? null : node.DeallocateStmt.name);
    return tagOnly(node.DeallocateStmt.isall ? 'DEALLOCATE ALL' : 'DEALLOCATE');
  }
  throw new WireError('0A000', 'vdb does not support this statement.');
}

export const abortedBlock = () => new WireError('25P02', 'current transaction is aborted, commands ignored until end of transaction block');
