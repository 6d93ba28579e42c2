// A recorded operation: its inputs, and the rule mapping output gradients to input gradients.
import type { Tensor } from '../tensor.js';
import { isGradEnabled } from './grad-mode.js';

export type Grads = (Tensor | null)[];

export interface Node {
  readonly name: string;
  /** The op's tensor inputs; entries that do not require grad are null (no gradient flows there). */
  inputs: (Tensor | null)[];
  readonly numOutputs: number;
  /** Given one gradient per output (null: that output did not reach the loss), one per input. */
  backward(gradOutputs: Grads): Grads;
  /** Frees what the node saved for backward (called once backward has used it). */
  release?(): void;
}

/** True when an op on these inputs must record a node. */
export function needsGrad(...inputs: readonly (Tensor | null | undefined)[]): boolean {
  if (!isGradEnabled()) return false;
  for (const t of inputs) if (t?.requiresGrad) return true;
  return false;
}

/**
 * Records a node producing `outputs` (when any input requires grad and recording is on).
 * Returns the first output for convenience.
 */
export function record(
  name: string,
  inputs: readonly (Tensor | null | undefined)[],
  outputs: Tensor[],
  backward: (gradOutputs: Grads) => Grads,
  release?: () => void,
): void {
  if (!needsGrad(...inputs)) {
    release?.();
    return;
  }
  const node: Node = {
    name,
    inputs: inputs.map((t) => (t?.requiresGrad ? t : null)),
    numOutputs: outputs.length,
    backward,
    release,
  };
  outputs.forEach((out, i) => {
    out.requiresGrad = true;
    out.node = node;
    out.outputIndex = i;
    out.fromOp = true;
  });
}
