/**
 * What the engine knows about each SQL function, in one table keyed by its name (lower case, as
 * `calledName` spells it): PostgreSQL's spelling, or the engine's for the engine's own functions
 * that a stage meets in trees vdb writes (list_concat, vdb_array_to_string, ...). Each stage asks
 * here instead of keeping a set of its own, so that what a function is to the allow-list, the
 * planners and the translation can be read in one line. How a call is written for the engine (code,
 * not facts) stays in translate/postgres-functions.ts; a name absent here has no fact at all.
 */

/** The facts of one function; a fact left out is false. */
export interface FunctionFacts {
  /** User SQL may call it as a scalar function, with PostgreSQL's name and meaning (front/allow-list.ts). */
  allowedScalar?: true;
  /** User SQL may call it as an aggregate, also over a window (front/allow-list.ts). */
  allowedAggregate?: true;
  /** User SQL may call it as a window function, with OVER (front/allow-list.ts). */
  allowedWindow?: true;
  /** User SQL may call it in a select list as a set-returning function: it multiplies rows as in PostgreSQL (front/allow-list.ts). */
  allowedSetInSelectList?: true;
  /** User SQL may call it in FROM as a table function (front/allow-list.ts). */
  allowedInFrom?: true;
  /** It may take VARIADIC text arrays, translated in translate/postgres-functions.ts (front/allow-list.ts). */
  allowedVariadic?: true;
  /** Its value changes from one evaluation to the next: never duplicated by a rewrite (tree/syntax-nodes.ts). */
  volatile?: true;
  /** It means the same in PostgreSQL as in the engine and reaches nothing else: a whole statement or a write may carry it to PostgreSQL (plan/whole.ts, statements/dml.ts). */
  sameAtPostgres?: true;
  /** It compares text to choose its answer: a whole statement carries it only under a bytewise collation (plan/whole.ts). */
  ordersText?: true;
  /** A scalar function that never aggregates: a statement calling only these keeps one row per row, so its LIMIT may go to the source (plan/scans.ts). */
  keepsRows?: true;
  /** An aggregate or a set-returning function: it computes over or multiplies rows, so no outer condition is pushed below it (plan/scans.ts). */
  computesOverRows?: true;
  /** What it builds is at most a few times its inputs: its result is checked against the value limit (translate/value-bounds.ts). */
  widensValues?: true;
  /** An aggregate whose value over a join combines from values a source computes per group of a table's keys (count as a sum of counts, sum, min, max) (plan/partial-aggregation.ts). */
  partialAggregate?: true;
  /** An aggregate PostgreSQL answers as numeric with a scale of its own choosing for exact input (translate/numeric-scales.ts, numeric-values.ts). */
  exactAverage?: true;
  /** PostgreSQL answers numeric (with a scale of its own) when an argument is numeric (translate/numeric-scales.ts). */
  numericMath?: true;
  /** A function-style cast of PostgreSQL (float8(3), int4('7')): the type's cast (translate/postgres-functions.ts). */
  castFunction?: true;
  /** A text function the engine has under this name with another meaning: only the forms translated reach the engine (translate/postgres-functions.ts). */
  textNamesake?: true;
  /** In FROM it returns one column: an alias without column names names that column (translate/postgres-functions.ts). */
  oneColumnInFrom?: true;
  /** Its result is int4 when its arguments are (known for integer literals) (translate/postgres-functions.ts). */
  int4OfInt4?: true;
  /** Its JSON text PostgreSQL spaces and spells its own way (1.50, ", "): a select list writes it as its text (translate/numeric-values.ts). */
  jsonText?: true;
  /** PostgreSQL's result type, where the engine's namesake answers another (BIGINT for int4) (translate/postgres-functions.ts). */
  resultType?: { type: string; typmods?: number[] };
  /** The engine has it under this other name, with the same arguments (translate/engine-dialect.ts). */
  engineName?: string;
}

/** The facts that are true or absent (every one but resultType and engineName). */
export type FunctionFact = { [F in keyof FunctionFacts]-?: FunctionFacts[F] extends true | undefined ? F : never }[keyof FunctionFacts];

const FUNCTIONS: Readonly<Record<string, Readonly<FunctionFacts>>> = {
  abs: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  acos: { allowedScalar: true },
  acosd: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_acosd' },
  acosh: { allowedScalar: true },
  age: { allowedScalar: true },
  any_value: { computesOverRows: true },
  approx_count_distinct: { computesOverRows: true },
  arg_max: { computesOverRows: true },
  arg_min: { computesOverRows: true },
  array_agg: { allowedAggregate: true, computesOverRows: true },
  array_append: { allowedScalar: true, widensValues: true },
  array_cat: { allowedScalar: true, widensValues: true },
  array_concat: { widensValues: true },
  array_length: { allowedScalar: true, resultType: { type: 'int4' } },
  array_position: { allowedScalar: true, resultType: { type: 'int4' } },
  array_prepend: { allowedScalar: true, widensValues: true },
  array_to_json: { allowedScalar: true, widensValues: true, resultType: { type: 'json' } },
  array_to_string: { allowedScalar: true, widensValues: true },
  array_upper: { allowedScalar: true, resultType: { type: 'int4' } },
  ascii: { allowedScalar: true, resultType: { type: 'int4' } },
  asin: { allowedScalar: true },
  asind: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_asind' },
  asinh: { allowedScalar: true },
  atan: { allowedScalar: true },
  atan2: { allowedScalar: true },
  atan2d: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_atan2d' },
  atand: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_atand' },
  atanh: { allowedScalar: true },
  avg: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  bit_and: { allowedAggregate: true },
  bit_length: { allowedScalar: true, resultType: { type: 'int4' } },
  bit_or: { allowedAggregate: true },
  bit_xor: { allowedAggregate: true },
  bool: { allowedScalar: true, castFunction: true },
  bool_and: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  bool_or: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  booleq: { allowedScalar: true, sameAtPostgres: true },
  btrim: { allowedScalar: true, sameAtPostgres: true, keepsRows: true, engineName: 'trim' },
  cardinality: { allowedScalar: true },
  cbrt: { allowedScalar: true, sameAtPostgres: true },
  ceil: { allowedScalar: true, sameAtPostgres: true },
  ceiling: { allowedScalar: true, sameAtPostgres: true },
  char_length: { allowedScalar: true, sameAtPostgres: true, keepsRows: true, resultType: { type: 'int4' } },
  character_length: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  chr: { allowedScalar: true },
  coalesce: { sameAtPostgres: true, keepsRows: true },
  concat: { allowedScalar: true, allowedVariadic: true, sameAtPostgres: true, keepsRows: true, widensValues: true },
  concat_ws: { allowedScalar: true, allowedVariadic: true, sameAtPostgres: true, widensValues: true },
  corr: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  cos: { allowedScalar: true },
  cosd: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_cosd' },
  cosh: { allowedScalar: true },
  cot: { allowedScalar: true },
  cotd: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_cotd' },
  count: { allowedAggregate: true, sameAtPostgres: true, partialAggregate: true, computesOverRows: true },
  covar_pop: { allowedAggregate: true, sameAtPostgres: true },
  covar_samp: { allowedAggregate: true, sameAtPostgres: true },
  cume_dist: { allowedWindow: true, sameAtPostgres: true },
  date: { allowedScalar: true, castFunction: true },
  date_part: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'float8' } },
  date_trunc: { allowedScalar: true, sameAtPostgres: true },
  decode: { allowedScalar: true, textNamesake: true },
  degrees: { allowedScalar: true },
  dense_rank: { allowedWindow: true, sameAtPostgres: true },
  div: { allowedScalar: true },
  encode: { allowedScalar: true, textNamesake: true },
  every: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, engineName: 'bool_and' },
  exp: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  extract: { allowedScalar: true, sameAtPostgres: true, engineName: 'date_part' },
  factorial: { allowedScalar: true, resultType: { type: 'numeric', typmods: [38, 0] } },
  first: { computesOverRows: true },
  first_value: { allowedWindow: true, sameAtPostgres: true },
  float4: { allowedScalar: true, castFunction: true },
  float8: { allowedScalar: true, castFunction: true },
  floor: { allowedScalar: true, sameAtPostgres: true },
  format: { allowedScalar: true, allowedVariadic: true, widensValues: true, textNamesake: true },
  gcd: { allowedScalar: true, int4OfInt4: true },
  gen_random_uuid: { allowedScalar: true, volatile: true },
  generate_series: {
    allowedSetInSelectList: true,
    allowedInFrom: true,
    sameAtPostgres: true,
    computesOverRows: true,
    oneColumnInFrom: true,
  },
  generate_subscripts: { computesOverRows: true },
  greatest: { sameAtPostgres: true },
  hex: { widensValues: true },
  histogram: { computesOverRows: true },
  initcap: { allowedScalar: true, sameAtPostgres: true },
  int2: { allowedScalar: true, castFunction: true },
  int4: { allowedScalar: true, castFunction: true },
  int8: { allowedScalar: true, castFunction: true },
  isfinite: { allowedScalar: true },
  json_agg: { allowedAggregate: true, computesOverRows: true, jsonText: true, resultType: { type: 'json' } },
  json_array_length: { allowedScalar: true, resultType: { type: 'int4' } },
  json_build_array: { resultType: { type: 'json' } },
  json_build_object: { resultType: { type: 'json' } },
  json_each: { computesOverRows: true },
  json_object_agg: { computesOverRows: true },
  json_quote: { widensValues: true },
  json_tree: { computesOverRows: true },
  jsonb_agg: { computesOverRows: true },
  justify_days: { allowedScalar: true },
  lag: { allowedWindow: true, sameAtPostgres: true },
  last: { computesOverRows: true },
  last_value: { allowedWindow: true, sameAtPostgres: true },
  lcm: { allowedScalar: true, int4OfInt4: true },
  lead: { allowedWindow: true, sameAtPostgres: true },
  least: { sameAtPostgres: true },
  left: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  length: { allowedScalar: true, sameAtPostgres: true, keepsRows: true, resultType: { type: 'int4' } },
  list: { computesOverRows: true },
  list_append: { widensValues: true },
  list_concat: { widensValues: true },
  list_prepend: { widensValues: true },
  ln: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  log: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  log10: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  lower: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  lpad: { allowedScalar: true, sameAtPostgres: true },
  ltrim: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  make_date: { allowedScalar: true, sameAtPostgres: true },
  make_interval: { allowedScalar: true },
  make_time: { allowedScalar: true },
  make_timestamp: { allowedScalar: true },
  make_timestamptz: { allowedScalar: true },
  max: { allowedAggregate: true, sameAtPostgres: true, partialAggregate: true, ordersText: true, computesOverRows: true },
  md5: { allowedScalar: true, sameAtPostgres: true },
  median: { computesOverRows: true },
  min: { allowedAggregate: true, sameAtPostgres: true, partialAggregate: true, ordersText: true, computesOverRows: true },
  min_scale: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  mod: { allowedScalar: true, sameAtPostgres: true },
  mode: { allowedAggregate: true, computesOverRows: true },
  now: { allowedScalar: true },
  nth_value: { allowedWindow: true },
  ntile: { allowedWindow: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  nullif: { sameAtPostgres: true, keepsRows: true },
  octet_length: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  overlay: { allowedScalar: true, textNamesake: true },
  percent_rank: { allowedWindow: true, sameAtPostgres: true },
  percentile_cont: { allowedAggregate: true, computesOverRows: true },
  percentile_disc: { allowedAggregate: true, computesOverRows: true },
  pg_typeof: { allowedScalar: true },
  pi: { allowedScalar: true, sameAtPostgres: true },
  position: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  pow: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  power: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  printf: { widensValues: true },
  quote_ident: { allowedScalar: true, textNamesake: true },
  quote_literal: { allowedScalar: true, textNamesake: true },
  radians: { allowedScalar: true },
  random: { allowedScalar: true, volatile: true },
  range: { computesOverRows: true },
  rank: { allowedAggregate: true, allowedWindow: true, sameAtPostgres: true },
  // Not sameAtPostgres: a whole statement's text[] column would come back as text.
  regexp_matches: { allowedSetInSelectList: true, allowedInFrom: true, computesOverRows: true, oneColumnInFrom: true },
  regexp_replace: { allowedScalar: true },
  regexp_split_to_array: { allowedScalar: true },
  regexp_split_to_table: {
    allowedSetInSelectList: true,
    allowedInFrom: true,
    sameAtPostgres: true,
    computesOverRows: true,
    oneColumnInFrom: true,
  },
  regr_avgx: { allowedAggregate: true },
  regr_avgy: { allowedAggregate: true },
  regr_count: { allowedAggregate: true, resultType: { type: 'int8' } },
  regr_intercept: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  regr_r2: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  regr_slope: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  regr_sxx: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  regr_sxy: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  regr_syy: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  repeat: { allowedScalar: true, sameAtPostgres: true },
  replace: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  reverse: { allowedScalar: true, sameAtPostgres: true },
  right: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  round: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  row_number: { allowedWindow: true, sameAtPostgres: true },
  row_to_json: { allowedScalar: true, widensValues: true, resultType: { type: 'json' } },
  rpad: { allowedScalar: true, sameAtPostgres: true },
  rtrim: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  scale: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  sign: { allowedScalar: true, sameAtPostgres: true },
  sin: { allowedScalar: true },
  sind: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_sind' },
  sinh: { allowedScalar: true },
  split_part: { allowedScalar: true, sameAtPostgres: true },
  sqrt: { allowedScalar: true, sameAtPostgres: true, numericMath: true },
  starts_with: { allowedScalar: true, sameAtPostgres: true },
  stddev: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  stddev_pop: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  stddev_samp: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  string_agg: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true },
  string_to_array: { allowedScalar: true },
  strpos: { allowedScalar: true, sameAtPostgres: true, resultType: { type: 'int4' } },
  substr: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  substring: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  sum: { allowedAggregate: true, sameAtPostgres: true, partialAggregate: true, computesOverRows: true },
  tan: { allowedScalar: true },
  tand: { allowedScalar: true, sameAtPostgres: true, engineName: 'vdb_tand' },
  tanh: { allowedScalar: true },
  text: { allowedScalar: true, castFunction: true },
  timezone: { allowedScalar: true },
  to_base64: { widensValues: true },
  to_char: { allowedScalar: true },
  to_date: { allowedScalar: true },
  to_hex: { allowedScalar: true, textNamesake: true },
  to_json: { allowedScalar: true, widensValues: true, jsonText: true, resultType: { type: 'json' } },
  to_timestamp: { allowedScalar: true },
  transaction_timestamp: { allowedScalar: true },
  translate: { allowedScalar: true, widensValues: true },
  trim: { sameAtPostgres: true, keepsRows: true },
  trim_scale: { allowedScalar: true, sameAtPostgres: true },
  trunc: { allowedScalar: true, sameAtPostgres: true },
  unnest: { allowedSetInSelectList: true, allowedInFrom: true, sameAtPostgres: true, computesOverRows: true, oneColumnInFrom: true },
  upper: { allowedScalar: true, sameAtPostgres: true, keepsRows: true },
  uuidv4: { allowedScalar: true, volatile: true },
  uuidv7: { allowedScalar: true, volatile: true },
  var_pop: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  var_samp: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  variance: { allowedAggregate: true, sameAtPostgres: true, computesOverRows: true, exactAverage: true },
  vdb_array_to_string: { widensValues: true },
  // to_char of numbers (runtime/number-format.ts): a computed template may be long.
  vdb_to_char: { widensValues: true },
  width_bucket: { allowedScalar: true, sameAtPostgres: true },
};

/** By name; a Map, so that no name reaches an object's own properties (constructor, __proto__). */
const REGISTRY: ReadonlyMap<string, Readonly<FunctionFacts>> = new Map(Object.entries(FUNCTIONS));

/** Everything known of the function `name` (lower case); undefined when nothing is. */
export const functionFacts = (name: string): Readonly<FunctionFacts> | undefined => REGISTRY.get(name);

/** Whether the function `name` (lower case) has `fact`. */
export const hasFact = (name: string, fact: FunctionFact): boolean => REGISTRY.get(name)?.[fact] === true;

/** The names of the functions that have `fact`, in alphabetical order. */
export const functionsWith = (fact: FunctionFact): string[] =>
  [...REGISTRY].filter(([, facts]) => facts[fact] === true).map(([name]) => name);

/** Every name the registry holds, in alphabetical order. */
export const registeredFunctions = (): string[] => [...REGISTRY.keys()];
