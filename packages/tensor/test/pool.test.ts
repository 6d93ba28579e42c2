// The buffer pool: freed buffers are reused by length, the pool never holds more than its limit, and
// lengths not used for the longest time are dropped first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as T from '../src/index.js';

test('the pool reuses freed buffers and evicts the least recently used lengths past its limit', () => {
  const pool = T.pool;
  const limit = pool.limitBytes;
  pool.clear();
  try {
    pool.setLimit(3 * 4096);
    const make = (n: number) => T.empty([n]);
    // Three lengths of 1024 floats' worth or less: all fit.
    for (const n of [1024, 512, 256]) make(n).dispose();
    assert.equal(pool.bytesPooled, (1024 + 512 + 256) * 4);
    const reused = pool.stats.reused;
    make(1024).dispose(); // 1024 is now the most recently used
    assert.equal(pool.stats.reused, reused + 1);
    // 2048 floats (8 KiB) push the pool past 12 KiB: the oldest lengths (512, then 256) go first.
    make(2048).dispose();
    assert.ok(pool.bytesPooled <= 3 * 4096);
    const before = pool.stats.reused;
    make(1024).dispose();
    make(2048).dispose();
    assert.equal(pool.stats.reused, before + 2, '1024 and 2048 stayed');
    const allocated = pool.stats.allocated;
    make(512).dispose();
    assert.equal(pool.stats.allocated, allocated + 1, '512 was evicted');
    // Many different lengths never grow the pool past its limit.
    for (let n = 1; n < 3000; n += 7) make(n).dispose();
    assert.ok(pool.bytesPooled <= 3 * 4096);
    assert.throws(() => pool.setLimit(-1), /non-negative/);
  } finally {
    pool.setLimit(limit);
    pool.clear();
  }
});
