// Loads the native addon that `npm ci` builds (node-gyp, see binding.gyp).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * Where the built addon lives: PRIME_TENSOR_ADDON if set (a .node file), else this package's
 * build/Release (or build/Debug for a debug build).
 */
export function addonPath(): string | undefined {
  const override = process.env.PRIME_TENSOR_ADDON;
  if (override) {
    if (!existsSync(override)) throw new Error(`PRIME_TENSOR_ADDON: no file at ${override}`);
    return override;
  }
  for (const flavour of ['Release', 'Debug']) {
    const candidate = path.join(packageRoot, 'build', flavour, 'tensor_cpu.node');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

// The addon's functions take the same positional arguments as the Kernels methods, with op names
// replaced by their index in UNARY_OPS / BINARY_OPS / REDUCE_OPS.
export type NativeAddon = Record<string, (...args: unknown[]) => unknown>;

let cached: NativeAddon | undefined;
let loadError: Error | undefined;

export function loadAddon(): NativeAddon {
  if (cached) return cached;
  if (loadError) throw loadError;
  const file = addonPath();
  if (!file) {
    loadError = new Error(
      `the native cpu backend is not built (no ${path.join(packageRoot, 'build/Release/tensor_cpu.node')}); ` +
        'run `npm ci` (or `npx node-gyp rebuild` in packages/tensor) with g++ and Node headers installed, ' +
        'or select the pure-TypeScript backend with PRIME_TENSOR_BACKEND=ref',
    );
    throw loadError;
  }
  cached = createRequire(import.meta.url)(file) as NativeAddon;
  return cached;
}
