/**
 * The spool between a source's stream and a slow client (results/spool.ts): the source is read
 * to its end while the client does not read, in order, through memory and disk; the disk budget
 * stops the read-ahead (backpressure reaches the source); a source's failure reaches the client
 * at once; a client that stops ends the source and gives the memory and the disk back.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Spools } from '../../src/results/spool.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-spool-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const CHUNK = 'é'.repeat(500) + 'x'.repeat(1000);

/** A source of `count` numbered chunks that counts what was read and whether it was ended. */
function source(count: number, failAt?: number) {
  const state = { read: 0, ended: false };
  async function* chunks(): AsyncGenerator<string> {
    try {
      for (let i = 0; i < count; i++) {
        if (i === failAt) throw new Error('the source failed');
        state.read++;
        yield `${i}:${CHUNK}`;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      state.ended = true;
    }
  }
  return { chunks: chunks(), state };
}

const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));

test('a client that does not read: the source is read to its end, through memory and disk, and comes out whole and in order', async () => {
  const spools = new Spools({ memoryBytes: 10_000, diskBytes: 10_000_000, dir });
  const { chunks, state } = source(200);
  const spooled = spools.spool(chunks);
  const first = await spooled.next();
  assert.equal(first.value, `0:${CHUNK}`);
  for (let i = 0; i < 100 && !state.ended; i++) await settle(10);
  assert.equal(state.read, 200, 'the source was read while the client waited');
  assert.ok(state.ended, 'the source ended (its connection went back)');
  assert.ok(spools.stats().diskBytes > 0, 'part of it on disk');
  assert.ok(spools.stats().memoryBytes <= 10_000 + CHUNK.length + 10);
  let expected = 1;
  for await (const chunk of spooled) assert.equal(chunk, `${expected++}:${CHUNK}`);
  assert.equal(expected, 200);
  assert.deepEqual(spools.stats(), { open: 0, memoryBytes: 0, diskBytes: 0, spilled: 1 });
  assert.deepEqual(fs.readdirSync(dir), [], 'no file left behind');
});

test('the disk budget spent: the source waits for the client, and the result is still whole', async () => {
  const spools = new Spools({ memoryBytes: 5000, diskBytes: 20_000, dir });
  const { chunks, state } = source(100);
  const spooled = spools.spool(chunks);
  await spooled.next();
  await settle(200);
  assert.ok(state.read < 100, `read ahead ${state.read} chunks, within the budgets`);
  assert.ok(spools.stats().diskBytes <= 20_000);
  let count = 1;
  for await (const chunk of spooled) assert.equal(chunk, `${count++}:${CHUNK}`);
  assert.equal(count, 100);
  assert.equal(spools.stats().diskBytes, 0);
});

test("the source's failure reaches the client at once, before the rows read ahead", async () => {
  const spools = new Spools({ memoryBytes: 5000, diskBytes: 1_000_000, dir });
  const { chunks } = source(50, 30);
  const spooled = spools.spool(chunks);
  await spooled.next();
  await settle(200);
  await assert.rejects(spooled.next(), /the source failed/);
  assert.deepEqual(spools.stats(), { open: 0, memoryBytes: 0, diskBytes: 0, spilled: 1 });
});

test('a client that stops early ends the source and gives everything back', async () => {
  const spools = new Spools({ memoryBytes: 5000, diskBytes: 30_000, dir });
  const { chunks, state } = source(1000);
  const spooled = spools.spool(chunks);
  await spooled.next();
  await settle(100);
  assert.ok(spools.stats().open === 1 && spools.stats().diskBytes > 0);
  await spooled.return(undefined);
  assert.ok(state.ended, 'the source was ended');
  assert.ok(state.read < 1000);
  assert.deepEqual(spools.stats(), { open: 0, memoryBytes: 0, diskBytes: 0, spilled: 1 });
});

test("the statement's end (timeout, client gone) ends the result at once, also after the source's end, and lets go of memory and disk", async () => {
  const spools = new Spools({ memoryBytes: 5000, diskBytes: 1_000_000, dir });
  const { chunks, state } = source(100);
  const cancel = new AbortController();
  const spooled = spools.spool(chunks, cancel.signal);
  await spooled.next();
  for (let i = 0; i < 100 && !state.ended; i++) await settle(10);
  assert.ok(state.ended && spools.stats().diskBytes > 0, 'the source was read to its end, part of it on disk');
  cancel.abort(new Error('the statement was cancelled after 100 ms'));
  await settle();
  assert.deepEqual(spools.stats(), { open: 0, memoryBytes: 0, diskBytes: 0, spilled: 1 }, 'let go of before the client reads on');
  await assert.rejects(spooled.next(), /cancelled after 100 ms/);
  assert.deepEqual(spools.stats(), { open: 0, memoryBytes: 0, diskBytes: 0, spilled: 1 });
});

test('a result of one chunk goes as it is: no spool is opened for it; from a second chunk on, one is', async () => {
  const spools = new Spools({ memoryBytes: 10_000, diskBytes: 10_000_000, dir });
  const one = source(1);
  const read: string[] = [];
  for await (const chunk of spools.spool(one.chunks)) {
    read.push(chunk);
    assert.equal(spools.stats().open, 0, 'no spool for one chunk');
  }
  assert.deepEqual(read, [`0:${CHUNK}`]);
  assert.ok(one.state.ended);
  const three = source(3);
  const chunks: string[] = [];
  let opened = 0;
  for await (const chunk of spools.spool(three.chunks)) {
    chunks.push(chunk.slice(0, 2));
    opened = Math.max(opened, spools.stats().open);
  }
  assert.deepEqual(chunks, ['0:', '1:', '2:']);
  assert.equal(opened, 1);
  assert.equal(spools.stats().open, 0);
  // A client that stops after the first of several chunks ends the source.
  const many = source(50);
  for await (const chunk of spools.spool(many.chunks)) {
    assert.match(chunk, /^0:/);
    break;
  }
  await settle();
  assert.ok(many.state.ended, 'the source was ended');
  assert.equal(spools.stats().open, 0);
});
