// Atomic file writes: into a temporary file beside the target (`.<name>.<pid>.<random>.tmp`), flushed
// to disk, then renamed over it, so a reader — or a restart after a crash — sees the old file or the
// complete new one, never a torn one. A failed write removes its temporary file.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Runs `write` on a fresh temporary file, then syncs it and renames it to `path`. */
export async function writeAtomically(path: string, write: (file: FileHandle) => Promise<void>): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx');
    try {
      await write(file);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Writes text or bytes to `path` atomically. */
export function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  return writeAtomically(path, (file) => file.writeFile(data));
}

/** Writes all of `bytes` (a single write may be partial for very large buffers). */
export async function writeAll(file: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await file.write(bytes, done, Math.min(bytes.length - done, 1 << 30));
    done += bytesWritten;
  }
}
