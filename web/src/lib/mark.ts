/**
 * The console's own statements carry this comment, so the history screen can tell them from
 * the user's (the query log keeps statements as sent), and the API client can pace them.
 */
export const CONSOLE_MARK = '/* vdb console */';
