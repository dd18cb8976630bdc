/** Quoting for the statements the console writes itself (CALLs, catalog queries). */

/** A SQL string literal: single quotes doubled. */
export const sqlLiteral = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/** A quoted identifier: double quotes doubled. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `CALL SYSADMIN.<procedure>('a', 'b', ...)` with every argument a string literal. */
export const callProcedure = (procedure: string, ...args: string[]): string =>
  `CALL SYSADMIN.${procedure}(${args.map(sqlLiteral).join(', ')})`;
