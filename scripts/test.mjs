/**
 * Runs every compiled test file (dist/test/**\/*.test.js) with node's test runner, one file at a
 * time. The files are listed here because a directory argument works on Node 20 only and a glob
 * on Node 21 and later only; a list works on every version vdb supports.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.join('dist', 'test');
const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.js'))
  .map((file) => path.join(root, file))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no test files under ${root}: run "npm run build" first\n`);
  process.exit(1);
}
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
