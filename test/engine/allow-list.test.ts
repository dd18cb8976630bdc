/**
 * The allow-list of what user SQL may call (src/engine/front/allow-list.ts): every function the
 * engine has is judged (allowed or refused with a reason), and the checker refuses what is not
 * listed wherever it stands in a statement.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { ALLOWED_NAMES as ALLOWED, checkAllowed } from '../../src/engine/front/allow-list.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { REFUSED_ENGINE_FUNCTIONS, refusalReason } from '../../src/engine/front/refused-functions.js';
import { ApiError } from '../../src/errors.js';

const REFUSED = REFUSED_ENGINE_FUNCTIONS.flatMap((group) => group.names.trim().split(/\s+/));

/** The engine's functions, as the server's engine has them (same options: nothing downloaded). */
async function engineFunctions(): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll('SELECT DISTINCT function_name FROM duckdb_functions() ORDER BY 1');
    return reader.getRows().map((row) => String(row[0]));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const refusedCall = (sql: string, name: string) => {
  assert.throws(
    () => checkAllowed(parseStatement(sql)),
    (err: unknown) => err instanceof ApiError && err.status === 400 && err.description.includes(name),
    sql,
  );
};

before(() => initParser());

describe('the lists', () => {
  test('every function the engine offers is either allowed or refused with a reason', async () => {
    const unjudged = (await engineFunctions()).filter((name) => !ALLOWED.has(name) && !REFUSED.includes(name));
    assert.deepEqual(unjudged, [], 'functions of the engine that neither allow-list.ts nor refused-functions.ts names');
  });

  test('no function is both allowed and refused, and none is refused twice', () => {
    assert.deepEqual(
      REFUSED.filter((name) => ALLOWED.has(name)),
      [],
    );
    assert.equal(new Set(REFUSED).size, REFUSED.length);
    assert.match(refusalReason('read_csv') ?? '', /reads files/);
    assert.match(refusalReason('json_serialize_plan') ?? '', /SQL text/);
    assert.equal(refusalReason('lower'), null);
  });

  test('nothing that reads files, takes SQL text, or inspects the engine is allowed', () => {
    for (const name of ALLOWED) {
      assert.doesNotMatch(
        name,
        /^(read_|parquet_|duckdb_|pragma_|json_serialize|json_execute|query|current_setting|getenv|glob|stats$)/,
        name,
      );
    }
  });
});

describe('the checker', () => {
  test("PostgreSQL's functions, operators and types pass", () => {
    for (const sql of [
      "SELECT lower('A'), upper(x), length(x), substring(x from 2 for 3), position('a' in x), trim(both ' ' from x) FROM t",
      "SELECT count(*), sum(a), avg(a), string_agg(b, ',' ORDER BY b), percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t",
      'SELECT row_number() OVER (PARTITION BY a ORDER BY b), lag(a, 1) OVER w FROM t WINDOW w AS (ORDER BY a)',
      "SELECT extract(year FROM d), date_trunc('month', d), now(), CURRENT_DATE, d + interval '1 day' FROM t",
      "SELECT a::int, b::text, CAST(c AS numeric(10, 2)), '{1,2}'::int[], x::varchar(3), y::double precision FROM t",
      "SELECT * FROM generate_series(1, 3) g(i), unnest(ARRAY[1, 2]) u WHERE i > 1 AND 'ab' LIKE 'a%' AND 'ab' ~* 'B'",
      'SELECT pg_catalog.lower(x), a ^ 2, a % 2, -a, @ a, a & 1, a << 1, coalesce(a, 0), greatest(a, b), nullif(a, b) FROM t',
      'SELECT x FROM t ORDER BY x COLLATE "C"',
      "SELECT x LIKE 'a#%' ESCAPE '#', x NOT ILIKE 'a' ESCAPE '', x SIMILAR TO 'a|b', x NOT SIMILAR TO 'a!%' ESCAPE '!' FROM t",
      "SELECT substring(x similar 'a#\"b#\"c' escape '#'), substring(x from 'a#\"b#\"c' for '#') FROM t",
      "CALL SYSADMIN.createConnection('a', 'postgresql', 'host=x')",
    ]) {
      assert.doesNotThrow(() => checkAllowed(parseStatement(sql)), sql);
    }
  });

  test('a refused function is a 400 naming it, wherever it stands', () => {
    refusedCall("SELECT json_serialize_plan('SELECT 1')", 'json_serialize_plan');
    refusedCall("SELECT * FROM read_csv('/etc/passwd')", 'read_csv');
    refusedCall('SELECT 1 FROM t WHERE a IN (SELECT stats(b) FROM u)', 'stats');
    refusedCall('WITH x AS (SELECT current_query()) SELECT * FROM x', 'current_query');
    refusedCall("SELECT a FROM t ORDER BY getvariable('x')", 'getvariable');
    refusedCall("SELECT * FROM generate_series(1, (SELECT count(*) FROM read_text('/etc/passwd')))", 'read_text');
    refusedCall("SELECT * FROM t, LATERAL (SELECT current_setting('threads')) s", 'current_setting');
    refusedCall("SELECT main.lower('x')", 'main.lower');
    refusedCall('INSERT INTO s.t SELECT * FROM duckdb_settings()', 'duckdb_settings');
    refusedCall("UPDATE s.t SET a = current_setting('x')", 'current_setting');
    refusedCall("CALL SYSADMIN.createConnection(current_setting('x'), 'b', 'c')", 'current_setting');
    refusedCall('CREATE VIEW v.x AS SELECT version()', 'version');
    refusedCall('SELECT range(1, 3)', 'range');
    refusedCall("SELECT count(*) FILTER (WHERE getenv('HOME') IS NULL) FROM t", 'getenv');
    refusedCall("SELECT lower(VARIADIC ARRAY['a'])", 'VARIADIC');
  });

  test('operators, types, collations and constructs off the lists are refused', () => {
    refusedCall('SELECT 2 ** 3', '**');
    refusedCall('SELECT 1 OPERATOR(main.+) 2', 'main.+');
    // The helpers LIKE ... ESCAPE and SIMILAR TO are parsed with pass only there.
    refusedCall("SELECT pg_catalog.like_escape('a', '#')", 'like_escape');
    refusedCall("SELECT similar_to_escape('a')", 'similar_to_escape');
    refusedCall("SELECT 'a' SIMILAR TO similar_to_escape('a', '#', '!')", 'similar_to_escape');
    refusedCall("SELECT 'x'::regclass", 'regclass');
    refusedCall('SELECT x::hugeint FROM t', 'hugeint');
    refusedCall("SELECT 'a' < 'b' COLLATE nocase", 'nocase');
    refusedCall('SELECT CURRENT_SCHEMA', 'CURRENT_SCHEMA');
    refusedCall('SELECT xmlelement(name a)', 'XmlExpr');
    refusedCall('SELECT * FROM t TABLESAMPLE system_rows(10)', 'system_rows');
  });

  test('walks statements far deeper than the recursion of the rewriters allows without overflowing', () => {
    const deep = { stmts: [{ stmt: nest(50_000) }] };
    assert.doesNotThrow(() => checkAllowed(deep));
  });
});

/** A chain of nested SubLinks `depth` deep, built without recursion. */
function nest(depth: number): unknown {
  let node: unknown = { A_Const: { ival: { ival: 1 } } };
  for (let i = 0; i < depth; i++) node = { BoolExpr: { boolop: 'NOT_EXPR', args: [node] } };
  return node;
}
