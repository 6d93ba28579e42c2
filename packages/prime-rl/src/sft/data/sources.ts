// Where SFT data comes from: `data.name` is a local .jsonl/.json/.parquet file, a local directory in
// Hugging Face dataset layout, or a hub dataset id resolved to a directory by a caller-provided hook.
// This file finds the files of each subset/split and reads their records; rows.ts validates them.
import fs from 'node:fs';
import path from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';

export const DATA_FILE_EXTENSIONS = ['.jsonl', '.json', '.parquet'] as const;

/** Columns the SFT rows are built from (rows.ts); other Parquet columns are not read. */
const DATA_COLUMNS = ['messages', 'prompt', 'completion', 'tools', 'tool_defs'];

/** One subset/split of a dataset: its files in shard order. */
export interface DatasetSource {
  /** `subset/split`, or the split alone when no subsets are given (used in errors and metrics). */
  label: string;
  /** Absolute paths. */
  files: string[];
  /** The directory file names in messages are shown relative to. */
  root: string;
}

export interface LocateOptions {
  /** Downloads a Hugging Face hub dataset and returns its local directory. */
  resolveDatasetDir?: (name: string) => Promise<string>;
  /** Base of relative paths (default: the working directory). */
  cwd?: string;
}

/** Records of one file and how to name record i in an error message. */
export interface FileRecords {
  records: unknown[];
  locate(index: number): string;
}

/** The subset/split sources of `data.name`, in config order. */
export async function locateSources(
  name: string,
  subsets: readonly string[] | null,
  splits: readonly string[] | null,
  options: LocateOptions = {},
): Promise<DatasetSource[]> {
  const local = path.resolve(options.cwd ?? process.cwd(), expandHome(name));
  const stat = statOrNull(local);
  if (stat?.isFile()) return [singleFileSource(local, subsets, splits)];
  if (stat?.isDirectory()) return directorySources(local, subsets, splits);
  if (stat) throw new Error(`dataset '${name}' is neither a file nor a directory`);
  if (looksLikeLocalPath(name)) throw new Error(`dataset path '${name}' does not exist (resolved to ${local})`);
  if (!options.resolveDatasetDir) {
    throw new Error(`dataset '${name}' is not a local file or directory, and hub download is not available`);
  }
  const dir = await options.resolveDatasetDir(name);
  if (!statOrNull(dir)?.isDirectory()) {
    throw new Error(`dataset '${name}' was resolved to '${dir}', which is not a directory`);
  }
  return directorySources(dir, subsets, splits);
}

/** Reads every record of a .jsonl, .json (array or JSON Lines) or .parquet file. */
export async function readRecords(file: string, displayName: string): Promise<FileRecords> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.parquet') return readParquet(file, displayName);
  if (ext === '.jsonl' || ext === '.json') return readJson(file, displayName);
  throw new Error(`${displayName}: unsupported dataset file type '${ext}' (use ${DATA_FILE_EXTENSIONS.join(', ')})`);
}

function singleFileSource(
  file: string,
  subsets: readonly string[] | null,
  splits: readonly string[] | null,
): DatasetSource {
  const ext = path.extname(file).toLowerCase();
  if (!(DATA_FILE_EXTENSIONS as readonly string[]).includes(ext)) {
    throw new Error(`dataset file '${file}' has an unsupported type '${ext}' (use ${DATA_FILE_EXTENSIONS.join(', ')})`);
  }
  // A single file is one dataset with one "train" split, as with `load_dataset("json", data_files=…)`.
  if (subsets !== null) {
    throw new Error(`dataset '${file}' is a single file: data.subsets only applies to a dataset directory`);
  }
  if (splits !== null && (splits.length !== 1 || splits[0] !== 'train')) {
    throw new Error(
      `dataset '${file}' is a single file, which only has the "train" split (got data.splits = ${JSON.stringify(splits)})`,
    );
  }
  return { label: 'train', files: [file], root: path.dirname(file) };
}

function directorySources(
  root: string,
  subsets: readonly string[] | null,
  splits: readonly string[] | null,
): DatasetSource[] {
  // Like prime-rl: subsets pair up with splits; a missing list means the default subset / the "train" split.
  const count = subsets?.length ?? splits?.length ?? 1;
  if (subsets !== null && splits !== null && subsets.length !== splits.length) {
    throw new Error(`got ${subsets.length} subsets and ${splits.length} splits; give one split per subset`);
  }
  const sources: DatasetSource[] = [];
  for (let i = 0; i < count; i++) {
    const subset = subsets?.[i] ?? null;
    const split = splits?.[i] ?? 'train';
    const dir = subset === null ? root : subsetDir(root, subset);
    const files = splitFiles(dir, split);
    if (files.length === 0) throw new Error(noSplitFilesMessage(root, dir, subset, split));
    const extensions = new Set(files.map((f) => path.extname(f).toLowerCase()));
    if (extensions.size > 1) {
      const shown = files.map((f) => path.relative(root, f)).join(', ');
      throw new Error(`split '${split}' of '${dir}' has files in several formats (${shown}); keep one format`);
    }
    sources.push({ label: subset === null ? split : `${subset}/${split}`, files, root });
  }
  return sources;
}

function subsetDir(root: string, subset: string): string {
  const dir = path.join(root, subset);
  if (statOrNull(dir)?.isDirectory()) return dir;
  const available = subdirectories(root);
  throw new Error(
    `subset '${subset}' not found: '${root}' has no directory '${subset}'` +
      (available.length > 0 ? ` (subsets there: ${available.join(', ')})` : ''),
  );
}

/**
 * The files of a split in `dir`, sorted (shard order), following the Hugging Face layouts:
 * `{split}.ext`, `{split}-*.ext` (e.g. train-00000-of-00002.parquet) and `{split}/*.ext`,
 * each directly in `dir` or in `dir/data`.
 */
function splitFiles(dir: string, split: string): string[] {
  const found = new Set<string>();
  for (const base of [dir, path.join(dir, 'data')]) {
    for (const entry of listDir(base)) {
      const full = path.join(base, entry.name);
      if (entry.isFile() && isDataFile(entry.name)) {
        const stem = entry.name.slice(0, entry.name.length - path.extname(entry.name).length);
        if (stem === split || entry.name.startsWith(`${split}-`)) found.add(full);
      } else if (entry.isDirectory() && entry.name === split) {
        for (const inner of listDir(full)) {
          if (inner.isFile() && isDataFile(inner.name)) found.add(path.join(full, inner.name));
        }
      }
    }
  }
  return [...found].sort();
}

function noSplitFilesMessage(root: string, dir: string, subset: string | null, split: string): string {
  const patterns = [
    `${split}.jsonl`,
    `${split}.parquet`,
    `${split}-*.parquet`,
    `${split}/*`,
    `data/${split}-*.parquet`,
  ];
  let message = `no files for split '${split}' in '${dir}' (looked for ${patterns.join(', ')})`;
  const available = subdirectories(root);
  if (subset === null && available.length > 0) {
    message += `; the dataset has subset directories ${available.join(', ')}: choose them with data.subsets`;
  }
  return message;
}

async function readJson(file: string, displayName: string): Promise<FileRecords> {
  const text = fs.readFileSync(file, 'utf8');
  // A .json file may hold one JSON array of rows (as `load_dataset("json")` accepts) instead of JSON Lines.
  if (path.extname(file).toLowerCase() === '.json' && text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`${displayName}: invalid JSON (${errorMessage(error)})`);
    }
    if (!Array.isArray(parsed)) throw new Error(`${displayName}: expected a JSON array of rows`);
    return { records: parsed, locate: (i) => `${displayName} element ${i}` };
  }
  const records: unknown[] = [];
  const lineNumbers: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      records.push(JSON.parse(line));
    } catch (error) {
      throw new Error(`${displayName} line ${i + 1}: invalid JSON (${errorMessage(error)})`);
    }
    lineNumbers.push(i + 1);
  }
  return { records, locate: (i) => `${displayName} line ${lineNumbers[i] ?? '?'}` };
}

async function readParquet(file: string, displayName: string): Promise<FileRecords> {
  const fail = (error: unknown): never => {
    throw new Error(`${displayName}: cannot read Parquet file: ${errorMessage(error)}`);
  };
  const buffer = await asyncBufferFromFile(file).catch(fail);
  const metadata = await parquetMetadataAsync(buffer).catch(fail);
  const present = parquetSchema(metadata).children.map((column) => column.element.name);
  const columns = DATA_COLUMNS.filter((name) => present.includes(name));
  if (!columns.includes('messages') && !(columns.includes('prompt') && columns.includes('completion'))) {
    throw new Error(
      `${displayName}: needs a 'messages' column or 'prompt' and 'completion' columns (columns: ${present.join(', ')})`,
    );
  }
  const records: unknown[] = await parquetReadObjects({ file: buffer, columns }).catch(fail);
  return { records, locate: (i) => `${displayName} row ${i}` };
}

function isDataFile(name: string): boolean {
  return (DATA_FILE_EXTENSIONS as readonly string[]).includes(path.extname(name).toLowerCase());
}

function listDir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function subdirectories(dir: string): string[] {
  return listDir(dir)
    .filter((e) => e.isDirectory() && e.name !== 'data' && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

function statOrNull(p: string): fs.Stats | null {
  try {
    return fs.statSync(p);
  } catch {
    return null;
  }
}

function expandHome(name: string): string {
  const home = process.env.HOME;
  return home && (name === '~' || name.startsWith('~/')) ? path.join(home, name.slice(1)) : name;
}

/** Names a hub id can never be: absolute/relative paths and data file names. */
function looksLikeLocalPath(name: string): boolean {
  return (
    path.isAbsolute(name) ||
    name.startsWith('./') ||
    name.startsWith('../') ||
    name.startsWith('~') ||
    name === '.' ||
    isDataFile(name)
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
