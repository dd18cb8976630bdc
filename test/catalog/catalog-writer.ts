/**
 * Child process of file-store.test.ts: changes the catalog of the data directory in argv[2] as
 * fast as it can, printing the name of each change once it is committed, until it is killed.
 */
import { FileCatalogStore } from '../../src/catalog/file-store.js';

const store = new FileCatalogStore(process.argv[2]!);
// A catalog of some size (about 1.5 MB), so that a kill often lands in the middle of a write.
if ((store.current.permissions ?? []).length === 0) {
  await store.update((catalog) => {
    catalog.permissions = Array.from({ length: 10000 }, (_, i) => ({
      role: `padding_${i}`,
      resource: `schema_${i}.table_${i}`,
      permissions: 'R',
      condition: `region = 'region number ${i}'`,
      mask: null,
      maskOrder: null,
    }));
  });
}
for (let i = 0; ; i++) {
  const role = `burst_${process.pid}_${i}`;
  await store.update((catalog) => {
    catalog.roles = [...(catalog.roles ?? []), role];
  });
  process.stdout.write(`${role}\n`);
}
