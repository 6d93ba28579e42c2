import type { Kernels } from '../kernels.js';

export const elementwiseKernels: Pick<
  Kernels,
  'unary' | 'unaryBackward' | 'affine' | 'powScalar' | 'clamp' | 'binary' | 'axpy' | 'reduce' | 'sumSquares'
> = {
  unary() {
    throw new Error('ref.unary: not written yet');
  },
  unaryBackward() {
    throw new Error('ref.unaryBackward: not written yet');
  },
  affine() {
    throw new Error('ref.affine: not written yet');
  },
  powScalar() {
    throw new Error('ref.powScalar: not written yet');
  },
  clamp() {
    throw new Error('ref.clamp: not written yet');
  },
  binary() {
    throw new Error('ref.binary: not written yet');
  },
  axpy() {
    throw new Error('ref.axpy: not written yet');
  },
  reduce() {
    throw new Error('ref.reduce: not written yet');
  },
  sumSquares() {
    throw new Error('ref.sumSquares: not written yet');
  },
};
