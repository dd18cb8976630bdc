import { parseSync, loadModule } from 'libpg-query';
await loadModule();
import { engineSql } from './dist/src/engine/exec/engine-dialect.js';
console.log(engineSql(parseSync(process.argv[2])));
