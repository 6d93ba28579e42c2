// Shared test helpers: closeness of float arrays, and temporary directories removed after the file's tests.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/** max |ours − theirs| / max |theirs|. */
export function relativeError(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  assert.equal(ours.length, theirs.length, `lengths differ: ${ours.length} vs ${theirs.length}`);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < theirs.length; i++) {
    diff = Math.max(diff, Math.abs(ours[i]! - theirs[i]!));
    scale = Math.max(scale, Math.abs(theirs[i]!));
  }
  return diff / scale;
}

const temporaryDirs: string[] = [];
let cleanupRegistered = false;

/** A fresh directory under the OS temp dir, deleted when the test file's tests are done. */
export async function temporaryDirectory(prefix: string): Promise<string> {
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    after(async () => {
      for (const dir of temporaryDirs) await rm(dir, { recursive: true, force: true });
    });
  }
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporaryDirs.push(dir);
  return dir;
}
