// The native CPU backend: the Kernels contract implemented by the C++ addon (SIMD, threads).
import { BINARY_OPS, UNARY_OPS, type Kernels, type ReduceOp } from '../kernels.js';
import { loadAddon } from './addon.js';

const REDUCE_OPS: readonly ReduceOp[] = ['sum', 'max', 'min'];

function opIndex<T extends string>(ops: readonly T[], op: T): number {
  const i = ops.indexOf(op);
  if (i < 0) throw new TypeError(`unknown op '${op}'`);
  return i;
}

export function createCpuKernels(): Kernels {
  const a = loadAddon();
  const fn = (name: string) => {
    const f = a[name];
    if (typeof f === 'function') return f;
    return () => {
      throw new Error(`native cpu backend: the addon has no kernel '${name}' (rebuild it: npx node-gyp rebuild)`);
    };
  };
  const threads = fn('threads');
  const setThreads = fn('setThreads');
  const fill = fn('fill');
  const stridedCopy = fn('stridedCopy');
  const f32ToBf16 = fn('f32ToBf16');
  const bf16ToF32 = fn('bf16ToF32');
  const i32ToF32 = fn('i32ToF32');
  const unary = fn('unary');
  const unaryBackward = fn('unaryBackward');
  const affine = fn('affine');
  const powScalar = fn('powScalar');
  const clamp = fn('clamp');
  const binary = fn('binary');
  const axpy = fn('axpy');
  const reduce = fn('reduce');
  const sumSquares = fn('sumSquares');
  const gemm = fn('gemm');
  const embedding = fn('embedding');
  const embeddingBackward = fn('embeddingBackward');
  const rmsnorm = fn('rmsnorm');
  const rmsnormBackward = fn('rmsnormBackward');
  const rope = fn('rope');
  const swiglu = fn('swiglu');
  const swigluBackward = fn('swigluBackward');
  const softmax = fn('softmax');
  const softmaxBackward = fn('softmaxBackward');
  const logSoftmax = fn('logSoftmax');
  const logSoftmaxBackward = fn('logSoftmaxBackward');
  const gatherRows = fn('gatherRows');
  const gatherRowsBackward = fn('gatherRowsBackward');
  const attention = fn('attention');
  const attentionBackward = fn('attentionBackward');
  const attentionCached = fn('attentionCached');
  const tokenLogprobs = fn('tokenLogprobs');
  const tokenLogprobsBackward = fn('tokenLogprobsBackward');
  const adamw = fn('adamw');
  const sgd = fn('sgd');
  return {
    name: 'cpu',
    threads: () => threads() as number,
    setThreads: (n) => void setThreads(n),
    fill: (...args) => void fill(...args),
    stridedCopy: (...args) => void stridedCopy(...args),
    f32ToBf16: (...args) => void f32ToBf16(...args),
    bf16ToF32: (...args) => void bf16ToF32(...args),
    i32ToF32: (...args) => void i32ToF32(...args),
    unary: (op, ...rest) => void unary(opIndex(UNARY_OPS, op), ...rest),
    unaryBackward: (op, ...rest) => void unaryBackward(opIndex(UNARY_OPS, op), ...rest),
    affine: (...args) => void affine(...args),
    powScalar: (...args) => void powScalar(...args),
    clamp: (...args) => void clamp(...args),
    binary: (op, ...rest) => void binary(opIndex(BINARY_OPS, op), ...rest),
    axpy: (...args) => void axpy(...args),
    reduce: (op, ...rest) => void reduce(opIndex(REDUCE_OPS, op), ...rest),
    sumSquares: (...args) => sumSquares(...args) as number,
    gemm: (...args) => void gemm(...args),
    embedding: (...args) => void embedding(...args),
    embeddingBackward: (...args) => void embeddingBackward(...args),
    rmsnorm: (...args) => void rmsnorm(...args),
    rmsnormBackward: (...args) => void rmsnormBackward(...args),
    rope: (...args) => void rope(...args),
    swiglu: (...args) => void swiglu(...args),
    swigluBackward: (...args) => void swigluBackward(...args),
    softmax: (...args) => void softmax(...args),
    softmaxBackward: (...args) => void softmaxBackward(...args),
    logSoftmax: (...args) => void logSoftmax(...args),
    logSoftmaxBackward: (...args) => void logSoftmaxBackward(...args),
    gatherRows: (...args) => void gatherRows(...args),
    gatherRowsBackward: (...args) => void gatherRowsBackward(...args),
    attention: (...args) => void attention(...args),
    attentionBackward: (...args) => void attentionBackward(...args),
    attentionCached: (...args) => void attentionCached(...args),
    tokenLogprobs: (...args) => void tokenLogprobs(...args),
    tokenLogprobsBackward: (...args) => void tokenLogprobsBackward(...args),
    adamw: (...args) => void adamw(...args),
    sgd: (...args) => void sgd(...args),
  };
}
