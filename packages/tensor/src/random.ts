// Seeded random numbers: the same seed gives the same tensors on every backend and machine.
import { Tensor, empty } from './tensor.js';
import type { Shape } from './shape.js';
import { numel } from './shape.js';

/** xoshiro128** seeded through splitmix32; normals by Box–Muller in float64. */
export class Generator {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private spare: number | null = null;

  constructor(seed = 0) {
    this.seed(seed);
  }

  seed(seed: number): void {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    this.spare = null;
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    this.s0 >>>= 0;
    this.s1 >>>= 0;
    this.s2 >>>= 0;
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  normal(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  state(): number[] {
    return [this.s0, this.s1, this.s2, this.s3];
  }

  setState(state: readonly number[]): void {
    if (state.length !== 4) throw new RangeError('Generator.setState: expected 4 words');
    [this.s0, this.s1, this.s2, this.s3] = state.map((s) => s >>> 0) as [number, number, number, number];
    this.spare = null;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export const defaultGenerator = new Generator(0);

export function manualSeed(seed: number): void {
  defaultGenerator.seed(seed);
}

/** Normal(mean, std) samples. */
export function randn(shape: Shape, options: { std?: number; mean?: number; generator?: Generator } = {}): Tensor {
  const { std = 1, mean = 0, generator = defaultGenerator } = options;
  const out = empty(shape);
  const data = out.f32();
  for (let i = 0; i < numel(shape); i++) data[i] = mean + std * generator.normal();
  return out;
}

/** Uniform [lo, hi) samples. */
export function rand(shape: Shape, options: { lo?: number; hi?: number; generator?: Generator } = {}): Tensor {
  const { lo = 0, hi = 1, generator = defaultGenerator } = options;
  const out = empty(shape);
  const data = out.f32();
  for (let i = 0; i < numel(shape); i++) data[i] = lo + (hi - lo) * generator.uniform();
  return out;
}

/** Uniform integers in [0, n). */
export function randint(shape: Shape, n: number, generator = defaultGenerator): Tensor {
  const out = empty(shape, 'i32');
  const data = out.i32();
  for (let i = 0; i < numel(shape); i++) data[i] = generator.int(n);
  return out;
}
