/**
 * The function registry (src/engine/tree/functions.ts): for each fact, the exact names that have
 * it, as the stages' own sets held them before the registry gathered them (so the move changed
 * no stage's answer for any name), and the facts checked against each other.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ALLOWED_NAMES, checkAllowed, OPERATORS } from '../../src/engine/front/allow-list.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { REFUSED_ENGINE_FUNCTIONS } from '../../src/engine/front/refused-functions.js';
import { everyNode, statementOf } from '../../src/engine/tree/ast.js';
import { functionFacts, functionsWith, hasFact, registeredFunctions, type FunctionFact } from '../../src/engine/tree/functions.js';
import { calledName, isVolatile } from '../../src/engine/tree/syntax-nodes.js';

const names = (text: string): string[] => text.trim().split(/\s+/).sort();

/** Every fact (a Record, so that a new fact fails to compile until it is pinned here), with its names. */
const EXPECTED: Record<FunctionFact, string> = {
  volatile: `
    gen_random_uuid random uuidv4 uuidv7
  `,
  sameAtPostgres: `
    acosd asind atan2d atand booleq cosd cotd min_scale regexp_split_to_table scale sind tand trim_scale width_bucket
    abs avg bool_and bool_or btrim cbrt ceil ceiling char_length character_length coalesce concat
    concat_ws corr count covar_pop covar_samp cume_dist date_part date_trunc dense_rank every exp
    extract first_value floor generate_series greatest initcap lag last_value lead least left length ln
    log log10 lower lpad ltrim make_date max md5 min mod ntile nullif octet_length percent_rank pi
    position pow power rank repeat replace reverse right round row_number rpad rtrim sign split_part
    sqrt starts_with stddev stddev_pop stddev_samp string_agg strpos substr substring sum trim trunc
    unnest upper var_pop var_samp variance regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
  `,
  ordersText: `
    max min
  `,
  keepsRows: `
    abs btrim char_length coalesce concat left length lower ltrim nullif replace right round rtrim
    substr substring trim upper
  `,
  computesOverRows: `
    regexp_matches regexp_split_to_table
    any_value approx_count_distinct arg_max arg_min array_agg avg bool_and bool_or count every first
    generate_series generate_subscripts histogram json_agg json_each json_object_agg json_tree
    jsonb_agg last list max median min mode percentile_cont percentile_disc range stddev stddev_pop
    stddev_samp string_agg sum unnest var_pop var_samp variance corr regr_intercept regr_r2 regr_slope
    regr_sxx regr_sxy regr_syy
  `,
  widensValues: `
    array_append array_cat array_concat array_prepend array_to_json array_to_string concat concat_ws
    format hex json_quote list_append list_concat list_prepend printf row_to_json to_base64 to_json
    translate vdb_array_to_string vdb_to_char
  `,
  partialAggregate: `
    count max min sum
  `,
  exactAverage: `
    avg stddev stddev_pop stddev_samp var_pop var_samp variance
  `,
  numericMath: `
    exp ln log log10 pow power sqrt
  `,
  oneColumnInFrom: `
    regexp_matches regexp_split_to_table
    generate_series unnest
  `,
  castFunction: `
    bool date float4 float8 int2 int4 int8 text
  `,
  textNamesake: `
    decode encode format overlay quote_ident quote_literal to_hex
  `,
  int4OfInt4: `
    gcd lcm
  `,
  jsonText: `
    json_agg to_json
  `,
  allowedScalar: `
    acosd asind atan2d atand booleq cosd cotd min_scale pg_typeof scale sind tand trim_scale width_bucket
    abs acos acosh age array_append array_cat array_length array_position array_prepend array_to_json array_upper
    array_to_string ascii asin asinh atan atan2 atanh bit_length bool btrim cardinality cbrt ceil
    ceiling char_length character_length chr concat concat_ws cos cosh cot date date_part date_trunc
    decode degrees div encode exp extract factorial float4 float8 floor format gcd gen_random_uuid
    initcap int2 int4 int8 isfinite json_array_length justify_days lcm left length ln log log10 lower
    lpad ltrim make_date make_interval make_time make_timestamp make_timestamptz md5 mod now
    octet_length overlay pi position pow power quote_ident quote_literal radians random regexp_replace
    regexp_split_to_array repeat replace reverse right round row_to_json rpad rtrim sign sin sinh
    split_part sqrt starts_with string_to_array strpos substr substring tan tanh text timezone to_char
    to_date to_hex to_json to_timestamp transaction_timestamp translate trunc upper uuidv4 uuidv7
  `,
  allowedAggregate: `
    every
    array_agg avg bit_and bit_or bit_xor bool_and bool_or corr count covar_pop covar_samp json_agg max min
    mode percentile_cont percentile_disc rank regr_avgx regr_avgy regr_count stddev stddev_pop
    stddev_samp string_agg sum var_pop var_samp variance regr_intercept regr_r2 regr_slope regr_sxx
    regr_sxy regr_syy
  `,
  allowedWindow: `
    cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank row_number
  `,
  allowedSetInSelectList: `
    regexp_matches regexp_split_to_table
    generate_series unnest
  `,
  allowedInFrom: `
    regexp_matches regexp_split_to_table
    generate_series unnest
  `,
  allowedVariadic: `
    concat concat_ws format
  `,
};

const ALLOWED_USES = ['allowedScalar', 'allowedAggregate', 'allowedWindow', 'allowedSetInSelectList', 'allowedInFrom'] as const;
const isAllowed = (name: string) => ALLOWED_USES.some((use) => hasFact(name, use));
const subset = (fact: FunctionFact, ...of: FunctionFact[]) =>
  functionsWith(fact).filter((name) => !of.every((other) => hasFact(name, other)));

before(() => initParser());

describe('the facts, name by name', () => {
  for (const [fact, expected] of Object.entries(EXPECTED) as Array<[FunctionFact, string]>) {
    test(`${fact}: exactly the names its stage's set held`, () => {
      assert.deepEqual(functionsWith(fact), names(expected));
      for (const name of names(expected)) assert.equal(hasFact(name, fact), true, name);
    });
  }

  test('resultType: PostgreSQL result types where the engine answers another', () => {
    const types = Object.fromEntries(
      registeredFunctions().flatMap((name) => {
        const type = functionFacts(name)?.resultType;
        return type ? [[name, type]] : [];
      }),
    );
    const int4 = { type: 'int4' };
    const json = { type: 'json' };
    assert.deepEqual(types, {
      array_length: int4,
      array_upper: int4,
      array_position: int4,
      array_to_json: json,
      ascii: int4,
      bit_length: int4,
      char_length: int4,
      character_length: int4,
      date_part: { type: 'float8' },
      factorial: { type: 'numeric', typmods: [38, 0] },
      json_agg: json,
      json_array_length: int4,
      json_build_array: json,
      json_build_object: json,
      length: int4,
      min_scale: int4,
      ntile: int4,
      octet_length: int4,
      position: int4,
      regr_count: { type: 'int8' },
      row_to_json: json,
      scale: int4,
      strpos: int4,
      to_json: json,
    });
  });

  test("engineName: PostgreSQL's functions the engine has under another name (or vdb defines: vdb_*)", () => {
    const renamed = registeredFunctions().filter((name) => functionFacts(name)?.engineName !== undefined);
    assert.deepEqual(Object.fromEntries(renamed.map((name) => [name, functionFacts(name)!.engineName])), {
      acosd: 'vdb_acosd',
      asind: 'vdb_asind',
      atan2d: 'vdb_atan2d',
      atand: 'vdb_atand',
      btrim: 'trim',
      cosd: 'vdb_cosd',
      cotd: 'vdb_cotd',
      every: 'bool_and',
      extract: 'date_part',
      sind: 'vdb_sind',
      tand: 'vdb_tand',
    });
  });

  test('a name is looked up as written: lower case, never an object property', () => {
    assert.equal(hasFact('LOWER', 'allowedScalar'), false);
    assert.equal(hasFact('lower', 'allowedScalar'), true);
    for (const name of ['constructor', '__proto__', 'tostring', 'hasownproperty', '']) {
      assert.equal(functionFacts(name), undefined, name);
      assert.equal(hasFact(name, 'volatile'), false, name);
    }
  });

  test('every entry is a lower-case name with at least one fact', () => {
    for (const name of registeredFunctions()) {
      assert.match(name, /^[a-z_][a-z0-9_]*$/, name);
      const facts = Object.values(functionFacts(name)!);
      assert.ok(facts.length > 0, `${name} has no fact`);
    }
    assert.deepEqual(registeredFunctions(), [...registeredFunctions()].sort());
  });
});

describe('the facts against each other', () => {
  test('the allow-list is the allowed facts and the operators', () => {
    const functions = registeredFunctions().filter(isAllowed);
    assert.deepEqual([...ALLOWED_NAMES].sort(), [...new Set([...functions, ...OPERATORS])].sort());
  });

  test('no allowed function is on the list of refused engine functions', () => {
    const refused = new Set(REFUSED_ENGINE_FUNCTIONS.flatMap((group) => group.names.trim().split(/\s+/)));
    assert.deepEqual(
      registeredFunctions().filter((name) => isAllowed(name) && refused.has(name)),
      [],
    );
  });

  test('a whole statement or a write carries to PostgreSQL only calls the allow-list let through', () => {
    // These are not allowed as calls: they reach the engine only as the parser's own nodes
    // (COALESCE, GREATEST, NULLIF, TRIM) or not at all; their fact is never asked for a call.
    const notAllowed = functionsWith('sameAtPostgres').filter((name) => !isAllowed(name));
    assert.deepEqual(notAllowed, names('coalesce greatest least nullif trim'));
    for (const name of notAllowed) {
      const tree = parseStatement(`SELECT ${name}(1, 2)`);
      const called = !everyNode(tree, (kind, node) => kind !== 'FuncCall' || calledName(node) !== name);
      if (called) assert.throws(() => checkAllowed(tree), /not available/, name);
      else assert.doesNotThrow(() => checkAllowed(tree), name);
    }
  });

  test('nothing volatile is carried to PostgreSQL, keeps rows for a pushed LIMIT, or is checked as widening', () => {
    for (const name of functionsWith('volatile')) {
      assert.equal(hasFact(name, 'sameAtPostgres'), false, name);
      assert.equal(hasFact(name, 'keepsRows'), false, name);
      assert.equal(hasFact(name, 'widensValues'), false, name);
      assert.equal(hasFact(name, 'allowedScalar'), true, name);
      assert.equal(isVolatile(statementOf(parseStatement(`SELECT 1 + ${name}()`))), true, name);
    }
    assert.equal(isVolatile(statementOf(parseStatement('SELECT lower(x) FROM t'))), false);
  });

  test('what keeps rows means the same at PostgreSQL and never computes over rows', () => {
    assert.deepEqual(subset('keepsRows', 'sameAtPostgres'), []);
    assert.deepEqual(
      functionsWith('keepsRows').filter((name) => hasFact(name, 'computesOverRows')),
      [],
    );
  });

  test('set-returning functions of a select list and of FROM compute over rows', () => {
    assert.deepEqual(subset('allowedSetInSelectList', 'computesOverRows'), []);
    assert.deepEqual(subset('allowedInFrom', 'computesOverRows'), []);
    assert.deepEqual(subset('oneColumnInFrom', 'allowedInFrom'), []);
  });

  test('allowed aggregates compute over rows, but for those the scans need not know', () => {
    // Without GROUP BY an aggregate leaves no plain column an outer condition could be pushed
    // to, and with it the subquery is not a projection at all (plan/scans.ts, loadProjection).
    assert.deepEqual(
      subset('allowedAggregate', 'computesOverRows'),
      names('bit_and bit_or bit_xor covar_pop covar_samp rank regr_avgx regr_avgy regr_count'),
    );
  });

  test("the translations' name groups are allowed calls", () => {
    assert.deepEqual(subset('exactAverage', 'allowedAggregate', 'computesOverRows', 'sameAtPostgres'), []);
    assert.deepEqual(subset('partialAggregate', 'allowedAggregate', 'computesOverRows', 'sameAtPostgres'), []);
    assert.deepEqual(subset('numericMath', 'allowedScalar', 'sameAtPostgres'), []);
    assert.deepEqual(subset('castFunction', 'allowedScalar'), []);
    assert.deepEqual(subset('textNamesake', 'allowedScalar'), []);
    assert.deepEqual(subset('int4OfInt4', 'allowedScalar'), []);
    assert.deepEqual(subset('allowedVariadic', 'allowedScalar'), []);
    assert.deepEqual(subset('ordersText', 'allowedAggregate', 'sameAtPostgres'), []);
  });
});
