/**
 * The result formats vdb writes and the choice among them by the request's Accept header
 * (RFC 9110, 12.5.1): media ranges with q-values; the highest q wins, and among equals the
 * range the client listed first. No Accept, `*\/*` or `application/json`: JSON, the contract.
 */

export type ResultFormat = 'json' | 'csv' | 'ndjson' | 'arrow' | 'parquet';

/** Each format's media type, in the order vdb prefers them when the client has no preference. */
export const FORMAT_TYPES: ReadonlyArray<readonly [ResultFormat, string]> = [
  ['json', 'application/json'],
  ['csv', 'text/csv'],
  ['ndjson', 'application/x-ndjson'],
  ['arrow', 'application/vnd.apache.arrow.stream'],
  ['parquet', 'application/vnd.apache.parquet'],
];

/** The Content-Type each format is answered with. */
export const CONTENT_TYPES: Record<ResultFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
  arrow: 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
  index: number;
}

/** The media ranges of an Accept header; a malformed member is skipped, a bad q counts as 1. */
function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  accept.split(',').forEach((member, index) => {
    const [range = '', ...params] = member.split(';');
    const m = /^\s*([!#$%&'*+.^_`|~\w-]+)\/([!#$%&'*+.^_`|~\w-]+)\s*$/.exec(range);
    if (!m) return;
    let q = 1;
    for (const param of params) {
      const p = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(param);
      if (p) q = Math.min(1, Math.max(0, Number(p[1]) || 0));
    }
    ranges.push({ type: m[1]!.toLowerCase(), subtype: m[2]!.toLowerCase(), q, index });
  });
  return ranges;
}

/** The q and place a media type gets from its most specific matching range; null: no range matches. */
function preference(ranges: readonly MediaRange[], mediaType: string): { q: number; index: number } | null {
  const [type, subtype] = mediaType.split('/') as [string, string];
  let best: { range: MediaRange; specificity: number } | null = null;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity < 0) continue;
    if (!best || specificity > best.specificity) best = { range, specificity };
  }
  return best ? { q: best.range.q, index: best.range.index } : null;
}

/** The format to answer in, or null when the header accepts none of them (406). */
export function negotiateFormat(accept: string | undefined): ResultFormat | null {
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = mediaRanges(accept);
  // A header with no readable range says nothing: the default.
  if (ranges.length === 0) return 'json';
  let chosen: { format: ResultFormat; q: number; index: number } | null = null;
  for (const [format, mediaType] of FORMAT_TYPES) {
    const p = preference(ranges, mediaType);
    if (!p || p.q <= 0) continue;
    if (!chosen || p.q > chosen.q || (p.q === chosen.q && p.index < chosen.index)) chosen = { format, ...p };
  }
  return chosen?.format ?? null;
}

/** The media types vdb answers results in, for the 406's hint and the documentation. */
export const SUPPORTED_TYPES = FORMAT_TYPES.map(([, type]) => type);
