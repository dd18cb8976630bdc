/**
 * Results as NDJSON: one JSON object per line (keyed by column name), each the very text the
 * JSON answer holds for the row (array=false), ended by "\n".
 */
import { rowTexts } from './json-scan.js';

/** The lines of a chunk of object rows ("{...},{...}"). */
export function ndjsonLines(chunk: string): string {
  const rows = rowTexts(chunk);
  return rows.length === 0 ? '' : `${rows.join('\n')}\n`;
}
