import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
for (const sql of process.argv.slice(2)) {
  try { const r = await c.runAndReadAll(sql); console.log(sql, '=>', JSON.stringify(r.getRows(), (k,v)=> typeof v === 'bigint' ? v.toString() : v), r.columnTypes().map(String)); }
  catch (e) { console.log(sql, 'ERR', e.message.slice(0,200)); }
}
