// Where a `model.name` lives: a directory (relative to the working directory) is used as it is;
// anything else is a Hugging Face repo id, resolved through the local hub cache or downloaded.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { resolveModelPath } from '@prime-rl/lm';

export async function resolveModelDir(name: string, cwd: string = process.cwd()): Promise<string> {
  const localDir = resolve(cwd, name);
  const isDir = await stat(localDir).then(
    (st) => st.isDirectory(),
    () => false,
  );
  return isDir ? localDir : await resolveModelPath(name);
}
