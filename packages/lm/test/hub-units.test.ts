// The hub client's pure parts: fnmatch patterns as Python's fnmatch reads them, the HF_* environment with
// huggingface_hub's defaults, repo id rules, and the cache folder names.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  DEFAULT_ENDPOINT,
  filterPaths,
  HubError,
  matchesGlob,
  readHubEnvironment,
  repoFolderName,
  validateRepoId,
} from '../src/hub/index.js';

test('glob: * ? [set] [!set] match whole paths, * crosses slashes as in fnmatch', () => {
  const cases: [string, string, boolean][] = [
    ['config.json', '*.json', true],
    ['sub/dir/config.json', '*.json', true],
    ['config.jsonl', '*.json', false],
    ['tokenizer.json', 'tokenizer*', true],
    ['sub/tokenizer.json', 'tokenizer*', false],
    ['model-00001-of-00002.safetensors', 'model-?????-of-?????.safetensors', true],
    ['model-0001-of-00002.safetensors', 'model-?????-of-?????.safetensors', false],
    ['a1', 'a[0-9]', true],
    ['ab', 'a[0-9]', false],
    ['ab', 'a[!0-9]', true],
    ['a1', 'a[!0-9]', false],
    [']', '[]]', true],
    ['a', '[!]]', true],
    [']', '[!]]', false],
    ['-', '[a-]', true],
    ['[x', '[x', true],
    ['a.b', 'a?b', true],
    ['a+b', 'a+b', true],
    ['aab', 'a+b', false],
    ['a(b)', 'a(b)', true],
    ['x', '[z-a]', false],
    ['^', '[\\^]', true],
    ['\\', '[\\]', true],
    ['anything/at/all', '*', true],
    ['', '*', true],
    ['README.md', 'readme.md', false],
    ['a\nb', 'a*b', true],
    ['.hidden', '*', true],
  ];
  for (const [path, pattern, expected] of cases) {
    assert.equal(matchesGlob(path, pattern), expected, `${JSON.stringify(path)} vs ${JSON.stringify(pattern)}`);
  }
});

test('filterPaths: allow any of, ignore none of, and a trailing / selects a folder', () => {
  const paths = ['config.json', 'model.safetensors', 'onnx/model.onnx', 'onnx/config.json', 'README.md'];
  assert.deepEqual(filterPaths(paths, undefined, undefined), paths);
  assert.deepEqual(filterPaths(paths, ['*.json'], undefined), ['config.json', 'onnx/config.json']);
  assert.deepEqual(filterPaths(paths, ['*.json'], ['onnx/']), ['config.json']);
  assert.deepEqual(filterPaths(paths, undefined, ['*.md', '*.onnx']), [
    'config.json',
    'model.safetensors',
    'onnx/config.json',
  ]);
  assert.deepEqual(filterPaths(paths, [], undefined), []);
});

test('environment: huggingface_hub defaults and overrides', () => {
  const defaults = readHubEnvironment({ HOME: '/home/u' });
  assert.equal(defaults.home, '/home/u/.cache/huggingface');
  assert.equal(defaults.cacheDir, '/home/u/.cache/huggingface/hub');
  assert.equal(defaults.endpoint, DEFAULT_ENDPOINT);
  assert.equal(defaults.offline, false);

  const xdg = readHubEnvironment({ HOME: '/home/u', XDG_CACHE_HOME: '/xdg' });
  assert.equal(xdg.home, '/xdg/huggingface');
  const hfHome = readHubEnvironment({ HF_HOME: '~/hf', HOME: '/home/u', XDG_CACHE_HOME: '/xdg' });
  assert.equal(hfHome.home, '/home/u/hf');
  assert.equal(hfHome.cacheDir, '/home/u/hf/hub');
  assert.equal(readHubEnvironment({ HF_HOME: '/h', HF_HUB_CACHE: '/c' }).cacheDir, '/c');
  assert.equal(readHubEnvironment({ HF_HOME: '/h', HUGGINGFACE_HUB_CACHE: '/legacy' }).cacheDir, '/legacy');
  assert.equal(readHubEnvironment({ HF_ENDPOINT: 'https://mirror.example/' }).endpoint, 'https://mirror.example');
  assert.equal(readHubEnvironment({ HF_HOME: '' }).home, join(homedir(), '.cache', 'huggingface'));

  for (const value of ['1', 'true', 'TRUE', 'yes', 'On']) {
    assert.equal(readHubEnvironment({ HF_HUB_OFFLINE: value }).offline, true, value);
  }
  for (const value of ['0', 'false', 'no', '', 'offline']) {
    assert.equal(readHubEnvironment({ HF_HUB_OFFLINE: value }).offline, false, value);
  }
});

test('environment: HF_TOKEN wins over the token file, which is read from HF_HOME or HF_TOKEN_PATH', () => {
  const home = mkdtempSync(join(tmpdir(), 'prime-rl-hub-env-'));
  try {
    assert.equal(readHubEnvironment({ HF_HOME: home }).token, undefined);
    writeFileSync(join(home, 'token'), '  hf_fromfile\n');
    assert.equal(readHubEnvironment({ HF_HOME: home }).token, 'hf_fromfile');
    assert.equal(readHubEnvironment({ HF_HOME: home, HF_TOKEN: 'hf_fromenv' }).token, 'hf_fromenv');
    assert.equal(readHubEnvironment({ HF_HOME: home, HUGGING_FACE_HUB_TOKEN: 'hf_legacy' }).token, 'hf_legacy');
    assert.equal(readHubEnvironment({ HF_HOME: home, HF_TOKEN: '' }).token, 'hf_fromfile');
    writeFileSync(join(home, 'other'), 'hf_otherpath');
    assert.equal(readHubEnvironment({ HF_HOME: home, HF_TOKEN_PATH: join(home, 'other') }).token, 'hf_otherpath');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('repo ids: name or org/name under the hub rules; cache folder names', () => {
  for (const valid of ['gpt2', 'Qwen/Qwen3-0.6B', 'org_1/model.v2', 'a/b', 'meta-llama/Llama-3.1-8B-Instruct']) {
    assert.doesNotThrow(() => validateRepoId(valid), valid);
  }
  for (const invalid of [
    '',
    'a/b/c',
    '../x',
    'a/..',
    'org--x/y',
    '.org/x',
    'org/x-',
    'org/x y',
    'org/',
    '/x',
    'x'.repeat(97),
  ]) {
    assert.throws(
      () => validateRepoId(invalid),
      (error: unknown) => error instanceof HubError && error.kind === 'invalid-argument',
      invalid,
    );
  }
  assert.equal(repoFolderName('Qwen/Qwen3-0.6B', 'model'), 'models--Qwen--Qwen3-0.6B');
  assert.equal(repoFolderName('gpt2', 'model'), 'models--gpt2');
  assert.equal(repoFolderName('org/data', 'dataset'), 'datasets--org--data');
});
