/**
 * PostgreSQL's numeric arithmetic in the engine, as macros every generation defines at start.
 * A value is a pair {u: HUGEINT, r: INTEGER}: its digits without the point and its scale (the
 * number of digits after the point), so that each value keeps a scale of its own, as
 * PostgreSQL's numeric does (the engine's DECIMAL has one scale per column). Division, averages
 * and variances choose the result scale per value by PostgreSQL's rules (at least 16 significant
 * digits, from the operands' weights in base-10000 digits and their scales) and round half away
 * from zero. What does not fit 38 digits fails (an overflow error), never a rounded answer.
 * Used by engine/exec/numeric-values.ts; a few other PostgreSQL functions the engine lacks are
 * here too (postgres-functions.ts). User SQL cannot call them (allow-list).
 */
const MACROS: ReadonlyArray<readonly [string, string]> = [
  [
    'vdb_pow10(n)',
    `CASE WHEN $n > 38 THEN error('A numeric value of more than 38 digits is not supported by vdb''s engine') ELSE CAST('1' || repeat('0', CAST($n AS BIGINT)) AS HUGEINT) END`,
  ],
  ['vdb_num(u, r)', `CASE WHEN $u IS NULL THEN NULL ELSE {'u': CAST($u AS HUGEINT), 'r': CAST($r AS INTEGER)} END`],
  // A DECIMAL's digits: its text always shows the type's scale.
  ['vdb_unscaled(x)', `CAST(replace(CAST($x AS VARCHAR), '.', '') AS HUGEINT)`],
  ['vdb_hugeint(x)', `CAST($x AS HUGEINT)`],
  ['vdb_num_u(p)', `struct_extract($p, 'u')`],
  ['vdb_num_r(p)', `struct_extract($p, 'r')`],
  // The exponent of the leading digit, and the base-10000 weight and first digit PostgreSQL sees.
  ['vdb_num_e(p)', `length(CAST(abs(vdb_num_u($p)) AS VARCHAR)) - 1 - vdb_num_r($p)`],
  ['vdb_floor4(e)', `CASE WHEN $e >= 0 THEN $e // 4 ELSE -((3 - $e) // 4) END`],
  ['vdb_num_weight(p)', `CASE WHEN vdb_num_u($p) = 0 THEN 0 ELSE vdb_floor4(vdb_num_e($p)) END`],
  [
    'vdb_num_first_of(p, k)',
    `CAST(left(rpad(CAST(abs(vdb_num_u($p)) AS VARCHAR), CAST($k AS INTEGER), '0'), CAST($k AS INTEGER)) AS INTEGER)`,
  ],
  ['vdb_num_first(p)', `CASE WHEN vdb_num_u($p) = 0 THEN 0 ELSE vdb_num_first_of($p, vdb_num_e($p) - 4 * vdb_num_weight($p) + 1) END`],
  [
    'vdb_num_div_scale(a, b)',
    `least(greatest(16 - 4 * (vdb_num_weight($a) - vdb_num_weight($b) - CASE WHEN vdb_num_first($a) <= vdb_num_first($b) THEN 1 ELSE 0 END), vdb_num_r($a), vdb_num_r($b), 0), 1000)`,
  ],
  // n / d rounded half away from zero, for n >= 0 and d > 0.
  ['vdb_round_div(n, d)', `$n // $d + CASE WHEN 2 * ($n % $d) >= $d THEN 1 ELSE 0 END`],
  [
    'vdb_num_div_at(a, b, r)',
    `vdb_num(sign(vdb_num_u($a)) * sign(vdb_num_u($b)) * vdb_round_div(abs(vdb_num_u($a)) * vdb_pow10(vdb_num_r($b) + $r), abs(vdb_num_u($b)) * vdb_pow10(vdb_num_r($a))), $r)`,
  ],
  [
    'vdb_num_div(a, b)',
    `CASE WHEN $a IS NULL OR $b IS NULL THEN NULL WHEN vdb_num_u($b) = 0 THEN error('division by zero') ELSE vdb_num_div_at($a, $b, vdb_num_div_scale($a, $b)) END`,
  ],
  ['vdb_num_at(p, r)', `vdb_num_u($p) * vdb_pow10($r - vdb_num_r($p))`],
  ['vdb_num_max_r(a, b)', `greatest(vdb_num_r($a), vdb_num_r($b))`],
  ['vdb_num_add(a, b)', `vdb_num(vdb_num_at($a, vdb_num_max_r($a, $b)) + vdb_num_at($b, vdb_num_max_r($a, $b)), vdb_num_max_r($a, $b))`],
  ['vdb_num_sub(a, b)', `vdb_num(vdb_num_at($a, vdb_num_max_r($a, $b)) - vdb_num_at($b, vdb_num_max_r($a, $b)), vdb_num_max_r($a, $b))`],
  ['vdb_num_mul(a, b)', `vdb_num(vdb_num_u($a) * vdb_num_u($b), vdb_num_r($a) + vdb_num_r($b))`],
  ['vdb_num_neg(p)', `vdb_num(-vdb_num_u($p), vdb_num_r($p))`],
  ['vdb_num_abs(p)', `vdb_num(abs(vdb_num_u($p)), vdb_num_r($p))`],
  ['vdb_num_sign(p)', `vdb_num(sign(vdb_num_u($p)), 0)`],
  ['vdb_num_cmp(a, b)', `sign(vdb_num_at($a, vdb_num_max_r($a, $b)) - vdb_num_at($b, vdb_num_max_r($a, $b)))`],
  // LEAST/GREATEST as PostgreSQL evaluates them: NULLs skipped, the earlier value kept on ties.
  [
    'vdb_num_least2(acc, x)',
    `CASE WHEN $x IS NULL THEN $acc WHEN $acc IS NULL THEN $x WHEN vdb_num_cmp($x, $acc) < 0 THEN $x ELSE $acc END`,
  ],
  [
    'vdb_num_greatest2(acc, x)',
    `CASE WHEN $x IS NULL THEN $acc WHEN $acc IS NULL THEN $x WHEN vdb_num_cmp($x, $acc) > 0 THEN $x ELSE $acc END`,
  ],
  // round(x, s) and trunc(x, s): scale max(s, 0); a negative s rounds to tens, hundreds, ...
  ['vdb_num_unit(q, s)', `CASE WHEN $s >= 0 THEN vdb_num($q, $s) ELSE vdb_num($q * vdb_pow10(-$s), 0) END`],
  [
    'vdb_num_round(p, s)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_r($p) <= $s THEN vdb_num(vdb_num_at($p, $s), $s) ELSE vdb_num_unit(sign(vdb_num_u($p)) * vdb_round_div(abs(vdb_num_u($p)), vdb_pow10(vdb_num_r($p) - $s)), $s) END`,
  ],
  [
    'vdb_num_trunc(p, s)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_r($p) <= $s THEN vdb_num(vdb_num_at($p, $s), $s) ELSE vdb_num_unit(sign(vdb_num_u($p)) * (abs(vdb_num_u($p)) // vdb_pow10(vdb_num_r($p) - $s)), $s) END`,
  ],
  // floor and ceil: scale 0 (ceil(-0.5) is 0: integers have no negative zero).
  [
    'vdb_num_floor(p)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_u($p) >= 0 THEN vdb_num(vdb_num_u($p) // vdb_pow10(vdb_num_r($p)), 0) ELSE vdb_num(-((vdb_pow10(vdb_num_r($p)) - 1 - vdb_num_u($p)) // vdb_pow10(vdb_num_r($p))), 0) END`,
  ],
  ['vdb_num_ceil(p)', `vdb_num_neg(vdb_num_floor(vdb_num_neg($p)))`],
  // power(x, n) of a whole n as PostgreSQL's: the exact power (1 / it for a negative n) at scale
  // max(16, x's own), rounded half away from zero.
  [
    'vdb_num_powi(p, n)',
    `CASE WHEN $p IS NULL THEN NULL WHEN $n = 0 THEN vdb_num(1, 0) ELSE list_reduce(list_transform(range(abs($n)), lambda vdb_i: $p), lambda vdb_a, vdb_b: vdb_num_mul(vdb_a, vdb_b)) END`,
  ],
  ['vdb_num_pow_scale(p)', `greatest(16, vdb_num_r($p))`],
  [
    'vdb_num_pow_of(x, p, n)',
    `CASE WHEN $x IS NULL THEN NULL WHEN $n >= 0 THEN vdb_num_round($x, vdb_num_pow_scale($p)) WHEN vdb_num_u($x) = 0 THEN error('zero raised to a negative power is undefined') ELSE vdb_num_div_at(vdb_num(1, 0), $x, vdb_num_pow_scale($p)) END`,
  ],
  ['vdb_num_power(p, n)', `vdb_num_pow_of(vdb_num_powi($p, $n), $p, $n)`],
  // Square root rounded half up at the scale of p: Newton's steps from the double's root, then a correction.
  ['vdb_isqrt_step(n, s)', `($s + $n // $s) // 2`],
  ['vdb_isqrt_fix(n, s)', `CASE WHEN $s * $s > $n THEN $s - 1 WHEN ($s + 1) * ($s + 1) <= $n THEN $s + 1 ELSE $s END`],
  [
    'vdb_isqrt(n)',
    `CASE WHEN $n = 0 THEN CAST(0 AS HUGEINT) ELSE vdb_isqrt_fix($n, vdb_isqrt_step($n, vdb_isqrt_step($n, greatest(CAST(floor(sqrt(CAST($n AS DOUBLE))) AS HUGEINT), 1)))) END`,
  ],
  ['vdb_isqrt_round(n, s)', `$s + CASE WHEN $n - $s * $s > $s THEN 1 ELSE 0 END`],
  ['vdb_num_sqrt_of(n, r)', `vdb_num(vdb_isqrt_round($n, vdb_isqrt($n)), $r)`],
  ['vdb_num_sqrt(p)', `CASE WHEN $p IS NULL THEN NULL ELSE vdb_num_sqrt_of(vdb_num_u($p) * vdb_pow10(vdb_num_r($p)), vdb_num_r($p)) END`],
  // sqrt(x) of a numeric as PostgreSQL's: at least 16 significant digits (scale 15 - 2 * weight), no fewer than x's own.
  ['vdb_num_sqrt_scale(p)', `least(greatest(15 - 2 * vdb_num_weight($p), vdb_num_r($p), 0), 1000)`],
  ['vdb_num_sqrt_at(n, s)', `vdb_num(vdb_isqrt_round($n, vdb_isqrt($n)), $s)`],
  [
    'vdb_num_sqrt_pg(p)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_u($p) < 0 THEN error('cannot take square root of a negative number') ELSE vdb_num_sqrt_at(vdb_num_u($p) * vdb_pow10(2 * vdb_num_sqrt_scale($p) - vdb_num_r($p)), vdb_num_sqrt_scale($p)) END`,
  ],
  // Text read as PostgreSQL's numeric input reads it ([sign] digits [. digits] [e exponent], spaces
  // around), each value with its own scale: '1.500' keeps 3 digits, '1.5e3' is 1500.
  ['vdb_num_parts(t)', `regexp_extract($t, '^\\s*([+-]?)(\\d*)(?:\\.(\\d*))?(?:[eE]([+-]?\\d+))?\\s*$', ['s', 'i', 'f', 'e'])`],
  ['vdb_num_digits(m)', `ltrim(struct_extract($m, 'i') || struct_extract($m, 'f'), '0')`],
  ['vdb_num_exp_scale(m)', `length(struct_extract($m, 'f')) - CAST(coalesce(nullif(struct_extract($m, 'e'), ''), '0') AS BIGINT)`],
  ['vdb_num_scaled(u, s)', `CASE WHEN $s >= 0 THEN vdb_num($u, $s) ELSE vdb_num($u * vdb_pow10(-$s), 0) END`],
  [
    'vdb_num_from_parts(m, t)',
    `CASE WHEN struct_extract($m, 'i') = '' AND struct_extract($m, 'f') = '' THEN (CASE WHEN lower(trim($t)) IN ('nan', 'infinity', '+infinity', '-infinity', 'inf', '+inf', '-inf') THEN error('A numeric NaN or Infinity is not supported by vdb''s engine (its numbers hold neither); cast to float8 instead') ELSE error('invalid input syntax for type numeric: "' || $t || '"') END) WHEN length(vdb_num_digits($m)) > 38 THEN error('A numeric value of more than 38 digits is not supported by vdb''s engine') ELSE vdb_num_scaled(CAST(struct_extract($m, 's') || '0' || vdb_num_digits($m) AS HUGEINT), vdb_num_exp_scale($m)) END`,
  ],
  ['vdb_num_of_text(t)', `CASE WHEN $t IS NULL THEN NULL ELSE vdb_num_from_parts(vdb_num_parts($t), $t) END`],
  // A float as PostgreSQL's numeric reads it: its text with 15 significant digits (6 for a real).
  [
    'vdb_num_of_float(x, t)',
    `CASE WHEN isnan($x) OR isinf($x) THEN error('A numeric NaN or Infinity is not supported by vdb''s engine (its numbers hold neither); keep the value a float8') ELSE vdb_num_of_text($t) END`,
  ],
  ['vdb_num_of_double(x)', `vdb_num_of_float($x, printf('%.15g', CAST($x AS DOUBLE)))`],
  ['vdb_num_of_real(x)', `vdb_num_of_float($x, printf('%.6g', CAST($x AS DOUBLE)))`],
  // var_samp/var_pop/stddev of exact values as PostgreSQL computes them: (N*sum(x*x) - sum(x)^2) / (N*(N-1) or N*N).
  ['vdb_num_var_num(sx, sxx, n)', `vdb_num_sub(vdb_num_mul(vdb_num($n, 0), $sxx), vdb_num_mul($sx, $sx))`],
  [
    'vdb_num_var_of(num, den)',
    `CASE WHEN vdb_num_u($num) <= 0 THEN vdb_num(0, 0) ELSE vdb_num_div_at($num, $den, vdb_num_div_scale($num, $den)) END`,
  ],
  [
    'vdb_num_variance(sx, sxx, n, sample)',
    `CASE WHEN $n = 0 OR ($sample AND $n = 1) THEN NULL ELSE vdb_num_var_of(vdb_num_var_num($sx, $sxx, $n), vdb_num(CASE WHEN $sample THEN $n * ($n - 1) ELSE $n * $n END, 0)) END`,
  ],
  ['vdb_num_stddev(sx, sxx, n, sample)', `vdb_num_sqrt(vdb_num_variance($sx, $sxx, $n, $sample))`],
  // The text PostgreSQL writes, wrapped so that the JSON writer knows it (results/json.ts).
  [
    'vdb_num_text(p)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_r($p) = 0 THEN CAST(vdb_num_u($p) AS VARCHAR) ELSE (CASE WHEN vdb_num_u($p) < 0 THEN '-' ELSE '' END) || CAST(abs(vdb_num_u($p)) // vdb_pow10(vdb_num_r($p)) AS VARCHAR) || '.' || lpad(CAST(abs(vdb_num_u($p)) % vdb_pow10(vdb_num_r($p)) AS VARCHAR), CAST(vdb_num_r($p) AS INTEGER), '0') END`,
  ],
  // A value compared with others (engine/translate/compared-averages.ts): exact in a DECIMAL(38,18), or refused.
  [
    'vdb_num_decimal(p, what)',
    `CASE WHEN $p IS NULL THEN NULL WHEN vdb_num_r($p) > 18 OR vdb_num_e($p) >= 20 THEN error($what || ' of more than 18 decimals or 20 digits before the point, compared, is not supported by vdb''s engine') ELSE CAST(vdb_num_text($p) AS DECIMAL(38,18)) END`,
  ],
  ['vdb_num_result(p)', `{'pg numeric': vdb_num_text($p)}`],
  // money arithmetic as PostgreSQL's on 64-bit cents (engine/translate/money-arithmetic.ts), over
  // money numbers of two decimals: times or divided by an integer exactly (a division truncates),
  // by another number through a double rounded half to even (rint), money / money a double.
  // A number as money: exact (a DECIMAL or an integer) and within the range of 64-bit cents.
  [
    'vdb_money_number(n)',
    `CASE WHEN NOT (starts_with(typeof($n), 'DECIMAL') OR typeof($n) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT')) THEN error('money from a value other than a number is not supported by vdb''s engine') WHEN abs(CAST($n AS DECIMAL(38,2))) > 92233720368547758.07 THEN error('money out of range') ELSE CAST($n AS DECIMAL(38,2)) END`,
  ],
  // A money number as PostgreSQL writes it under lc_monetary C: '$1,234.50', '-$0.25'.
  [
    'vdb_money_text(n)',
    `(CASE WHEN $n < 0 THEN '-' ELSE '' END) || '$' || reverse(rtrim(regexp_replace(reverse(split_part(CAST(abs($n) AS VARCHAR), '.', 1)), '(\\d{3})', '\\1,', 'g'), ',')) || '.' || split_part(CAST(abs($n) AS VARCHAR), '.', 2)`,
  ],
  ['vdb_money_cents(m)', `CAST($m * 100 AS DOUBLE)`],
  ['vdb_money_of_cents(c)', `CAST(CAST($c AS DECIMAL(38,0)) * 0.01 AS DECIMAL(38,2))`],
  [
    'vdb_money_mul(m, f)',
    `CASE WHEN typeof($f) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT') THEN CAST($m * $f AS DECIMAL(38,2)) ELSE vdb_money_of_cents(round_even(vdb_money_cents($m) * CAST($f AS DOUBLE), 0)) END`,
  ],
  [
    'vdb_money_div(m, d)',
    `CASE WHEN $d = 0 THEN error('division by zero') WHEN typeof($d) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT') THEN vdb_money_of_cents(CAST($m * 100 AS HUGEINT) // $d) ELSE vdb_money_of_cents(round_even(vdb_money_cents($m) / CAST($d AS DOUBLE), 0)) END`,
  ],
  ['vdb_money_ratio(a, b)', `CASE WHEN $b = 0 THEN error('division by zero') ELSE vdb_money_cents($a) / vdb_money_cents($b) END`],
  // A numeric's text as it is (NaN, which the engine's numbers cannot hold).
  ['vdb_num_shown(t)', `{'pg numeric': CAST($t AS VARCHAR)}`],
  ['vdb_json_result(j)', `{'pg json': CAST($j AS VARCHAR)}`],
  // A float as PostgreSQL's to_json writes it (from its text t): whole numbers without ".0",
  // non-finite values as strings; exponent forms (below 1e-4, from 1e15) are refused.
  ['vdb_float_d(t)', `TRY_CAST($t AS DOUBLE)`],
  [
    'vdb_float_json(t)',
    `CASE WHEN $t IS NULL THEN NULL WHEN isnan(vdb_float_d($t)) THEN '"NaN"' WHEN vdb_float_d($t) = 'inf'::DOUBLE THEN '"Infinity"' WHEN vdb_float_d($t) = '-inf'::DOUBLE THEN '"-Infinity"' WHEN vdb_float_d($t) = 0 THEN CASE WHEN starts_with($t, '-') THEN '-0' ELSE '0' END WHEN abs(vdb_float_d($t)) >= 1e15 OR abs(vdb_float_d($t)) < 1e-4 THEN error('to_json()/json_agg() of a float written with an exponent is not supported by vdb''s engine') WHEN vdb_float_d($t) = trunc(vdb_float_d($t)) THEN CAST(CAST(vdb_float_d($t) AS BIGINT) AS VARCHAR) ELSE CAST(vdb_float_d($t) AS VARCHAR) END`,
  ],
  // Integer (int4) arithmetic as PostgreSQL's wraps around: the low 32 bits, signed.
  ['vdb_int4_wrap(v)', `xor($v & 4294967295, 2147483648) - 2147483648`],
  [
    'vdb_array_to_string(a, sep, nulls)',
    `array_to_string(list_transform($a, lambda vdb_x: coalesce(CAST(vdb_x AS VARCHAR), $nulls)), $sep)`,
  ],
  // initcap: the first letter or digit of each run of letters and digits upper case, the rest lower.
  [
    'vdb_initcap(s)',
    `array_to_string(list_transform(range(1, length($s) + 1), lambda vdb_i: CASE WHEN vdb_i = 1 OR NOT regexp_matches(substr($s, vdb_i - 1, 1), '^[\\pL\\pN]$') THEN upper(substr($s, vdb_i, 1)) ELSE lower(substr($s, vdb_i, 1)) END), '')`,
  ],
  // justify_days: 30 days a month.
  ['vdb_months(i)', `CAST(datepart('year', $i) * 12 + datepart('month', $i) AS INTEGER)`],
  [
    'vdb_interval_div(i, f)',
    `CASE WHEN $f = 0 THEN error('division by zero') WHEN vdb_months($i) <> 0 OR datepart('day', $i) <> 0 THEN error('dividing an interval of months or days is not supported by vdb''s engine') ELSE to_microseconds(CAST(round_even(CAST(datepart('hour', $i) * 3600000000 + datepart('minute', $i) * 60000000 + datepart('microseconds', $i) AS DOUBLE) / $f, 0) AS BIGINT)) END`,
  ],
  [
    'vdb_justify_days(i)',
    `CASE WHEN vdb_months($i) < 0 OR datepart('day', $i) < 0 THEN error('justify_days() of a negative interval is not supported by vdb''s engine') ELSE to_months(vdb_months($i) + CAST(datepart('day', $i) // 30 AS INTEGER)) + to_days(CAST(datepart('day', $i) % 30 AS INTEGER)) + ($i - to_months(vdb_months($i)) - to_days(CAST(datepart('day', $i) AS INTEGER))) END`,
  ],
];

/**
 * `CREATE MACRO` of each: a parameter used more than once is bound once through a lambda, as
 * the engine expands macros textually (nested calls would otherwise grow exponentially).
 */
export function macroSql([head, body]: readonly [string, string]): string {
  const params = /\((.*)\)/
    .exec(head)![1]!
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const placeholder = (p: string) => new RegExp(`\\$${p}(?!\\w)`, 'g');
  const uses = (p: string) => body.match(placeholder(p))?.length ?? 0;
  if (params.every((p) => uses(p) <= 1))
    return `CREATE MACRO ${head} AS ${params.reduce((text, p) => text.replace(placeholder(p), p), body)}`;
  const bound = params.reduce((text, p) => text.replace(placeholder(p), `struct_extract(vdb_t, '${p}')`), body);
  return `CREATE MACRO ${head} AS list_transform([{${params.map((p) => `'${p}': ${p}`).join(', ')}}], lambda vdb_t: ${bound})[1]`;
}

/** The statements that define the macros. */
export const NUMERIC_MACROS: readonly string[] = MACROS.map(macroSql);
