/**
 * Which failures are vdb's own storage (runtime/storage-errors.ts): the engine's messages about
 * its spill files (as DuckDB words them, taken from real runs on a full and a read-only tmpfs),
 * Node's errno of a local write; never a source's error that happens to speak of a full disk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StorageFailure } from '../../src/errors.js';
import { engineError } from '../../src/engine/exec/errors.js';
import { ownStorageFailure, storageWriteFailure } from '../../src/runtime/storage-errors.js';

const errno = (code: string, message: string, syscall = 'write') => Object.assign(new Error(message), { code, syscall, errno: -28 });

test('the engine: a full spill folder or engineSpillLimit reached is a 507, an unwritable one a 503, without paths', () => {
  const cases: Array<[string, number, RegExp]> = [
    [
      'IO Error: Could not write file "/data/spill/duckdb_temp_storage_DEFAULT-0.tmp": No space left on device',
      507,
      /No space left on device$/,
    ],
    [
      "Out of Memory Error: failed to offload data block of size 160.0 KiB (1.9 MiB/1.9 MiB used).\nThis limit was set by the 'max_temp_directory_size' setting.\nPossible solutions:\n* Reducing the number of threads",
      507,
      /engineSpillLimit.*failed to offload data block of size 160\.0 KiB \(1\.9 MiB\/1\.9 MiB used\)\.$/,
    ],
    [
      "Failed to append: failed to offload data block of size 96.0 KiB (896.0 KiB/976.5 KiB used).\nThis limit was set by the 'max_temp_directory_size' setting.",
      507,
      /engineSpillLimit/,
    ],
    ['Failed to append: Could not write file "/data/spill/duckdb_temp_storage_S160K-0.tmp": No space left on device', 507, /No space/],
    ['IO Error: Cannot open file "/data/spill/duckdb_temp_storage_S160K-0.tmp": Read-only file system', 503, /Read-only file system$/],
    ['IO Error: Failed to create directory "/data/spill": Read-only file system', 503, /Read-only file system$/],
  ];
  for (const [message, status, detail] of cases) {
    const mapped = engineError(
      new Error(message),
      (m) => m,
      () => 'files',
    );
    assert.ok(mapped instanceof StorageFailure, message);
    assert.equal(mapped.status, status, message);
    assert.match(mapped.description, detail);
    assert.doesNotMatch(mapped.description, /\/data\/|Possible solutions/, 'no paths, no tuning advice');
    assert.equal(ownStorageFailure(new Error(message))?.status, status, `where a source would be blamed: ${message}`);
  }
});

test("a source's errors stay the source's, even about a full disk of its own", () => {
  const postgres = Object.assign(new Error('could not write to file "base/pgsql_tmp/pgsql_tmp123.0": No space left on device'), {
    code: '53100',
  });
  const mariadb = Object.assign(new Error("The table 'big' is full"), { code: 'ER_RECORD_FILE_FULL', errno: 1114 });
  const sqlite = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  const lost = errno('ECONNRESET', 'read ECONNRESET', 'read');
  const fileSource = new Error('IO Error: No files found that match the pattern "/files/x.csv"');
  for (const err of [postgres, mariadb, sqlite, lost, fileSource]) assert.equal(ownStorageFailure(err), null, err.message);
  // An IO error of a file source's own file goes to the file source, as before.
  assert.match(
    engineError(
      fileSource,
      (m) => m,
      () => 'files',
    )?.description ?? '',
    /Data source "files"/,
  );
});

test('a local write: full is a 507, read-only a 503 wherever it is met; other refusals only where vdb wrote its own files', () => {
  const full = errno('ENOSPC', "ENOSPC: no space left on device, write '/data/catalog.json.1.tmp'");
  assert.equal(ownStorageFailure(full)?.status, 507);
  assert.equal(ownStorageFailure(errno('EDQUOT', 'EDQUOT: disk quota exceeded, write'))?.status, 507);
  assert.equal(ownStorageFailure(errno('EROFS', "EROFS: read-only file system, open '/data/x'", 'open'))?.status, 503);
  const denied = errno('EACCES', "EACCES: permission denied, open '/data/catalog.json.1.tmp'", 'open');
  assert.equal(ownStorageFailure(denied), null, 'a permission error elsewhere may be a source file');
  const catalog = storageWriteFailure(denied, 'the catalog');
  assert.ok(catalog instanceof StorageFailure);
  assert.equal(catalog.status, 503);
  assert.equal(catalog.title, "vdb's storage is unavailable");
  assert.equal(catalog.description, 'vdb could not write the catalog in its data directory: EACCES: permission denied');
  const written = storageWriteFailure(full, 'the catalog') as StorageFailure;
  assert.equal(written.status, 507);
  assert.equal(written.title, "vdb's storage is full");
  const other = new TypeError('not a storage failure');
  assert.equal(storageWriteFailure(other, 'the catalog'), other, 'anything else as it is');
});
