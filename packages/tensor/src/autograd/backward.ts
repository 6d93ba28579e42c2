// Reverse-mode differentiation over the recorded graph: order nodes so each runs after every
// node that consumes its outputs, feed gradients backwards, accumulate into leaf `.grad`s.
import { Tensor, ones, view } from '../tensor.js';
import { copyContiguous as cloneContiguous, contiguousOrCopy } from '../ops/util.js';
import { formatShape, sameShape } from '../shape.js';
import { kernels } from '../backend/select.js';
import { keep } from '../scope.js';
import type { Grads, Node } from './node.js';
import { noGrad } from './grad-mode.js';

export interface BackwardOptions {
  /** Gradient of the root (default: 1 for a one-element root). */
  grad?: Tensor;
  /** Keep the graph (and what nodes saved) so backward can run through it again. */
  retainGraph?: boolean;
}

/** Nodes reachable from root, consumers before producers. */
function topologicalOrder(root: Node): Node[] {
  const order: Node[] = [];
  const visited = new Set<Node>();
  const stack: { node: Node; next: number }[] = [{ node: root, next: 0 }];
  visited.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const inputs = top.node.inputs;
    if (top.next < inputs.length) {
      const child = inputs[top.next++]?.node;
      if (child && !visited.has(child)) {
        visited.add(child);
        stack.push({ node: child, next: 0 });
      }
    } else {
      order.push(top.node);
      stack.pop();
    }
  }
  return order.reverse();
}

function ownsWholeStorage(t: Tensor): boolean {
  return t.storage.refs === 1 && t.offset === 0 && t.isContiguous && t.storage.data.length === t.size && !t.kept;
}

/** Adds g into the leaf's .grad (creating it on first use). */
function accumulateLeaf(leaf: Tensor, g: Tensor): void {
  if (!sameShape(leaf.shape, g.shape))
    throw new Error(
      `backward: gradient ${formatShape(g.shape)} does not match ${leaf.describe()} (an op's backward rule is wrong)`,
    );
  if (leaf.grad === null) {
    // Adopt the gradient buffer when nothing else can see it; otherwise copy.
    const own = ownsWholeStorage(g) ? g : cloneContiguous(g);
    leaf.grad = keep(own);
    return;
  }
  const target = leaf.grad;
  if (g.isContiguous) kernels().axpy(1, g.f32(), target.f32(), target.size);
  else {
    const tmp = cloneContiguous(g);
    kernels().axpy(1, tmp.f32(), target.f32(), target.size);
    tmp.dispose();
  }
}

/**
 * Computes gradients of `root` with respect to every leaf tensor that requires grad and adds them
 * to those leaves' `.grad`. Intermediate gradients are disposed as soon as they are consumed.
 */
export function backward(root: Tensor, options: BackwardOptions = {}): void {
  root.assertAlive('backward');
  if (!root.requiresGrad)
    throw new Error(`backward: ${root.describe()} does not require grad (nothing to differentiate)`);
  let seed = options.grad;
  if (seed) {
    if (!sameShape(seed.shape, root.shape))
      throw new RangeError(`backward: grad ${formatShape(seed.shape)} does not match root ${formatShape(root.shape)}`);
  } else {
    if (root.size !== 1)
      throw new RangeError(`backward: root ${root.describe()} is not a scalar; pass options.grad of the same shape`);
    seed = ones(root.shape);
  }
  const ownSeed = options.grad === undefined;
  if (!root.node && root.fromOp)
    throw new Error(
      `backward: the graph of ${root.describe()} was already freed by an earlier backward (pass retainGraph: true to run it twice)`,
    );
  if (!root.node) {
    noGrad(() => accumulateLeaf(root, seed!));
    return;
  }
  noGrad(() => {
    const order = topologicalOrder(root.node!);
    const slots = new Map<Node, Grads>();
    // Gradients this pass created by summing, which no one else references: safe to add into.
    const summed = new WeakSet<Tensor>();
    // Tensors currently sitting in some slot; each slot holds a distinct object.
    const held = new Set<Tensor>();
    slots.set(
      root.node!,
      Array.from({ length: root.node!.numOutputs }, (_, i) => (i === root.outputIndex ? seed! : null)),
    );

    const deliver = (input: Tensor, g: Tensor): void => {
      if (!input.node) {
        accumulateLeaf(input, g);
        return;
      }
      let grads = slots.get(input.node);
      if (!grads) slots.set(input.node, (grads = new Array<Tensor | null>(input.node.numOutputs).fill(null)));
      const existing = grads[input.outputIndex];
      if (!existing) {
        const stored = held.has(g) ? view(g, g.shape, g.strides, g.offset) : g;
        grads[input.outputIndex] = stored;
        held.add(stored);
        return;
      }
      if (summed.has(existing) && g.isContiguous) {
        kernels().axpy(1, g.f32(), existing.f32(), existing.size);
        return;
      }
      const sum = cloneContiguous(existing);
      const add = contiguousOrCopy(g);
      kernels().axpy(1, add.f32(), sum.f32(), sum.size);
      if (add !== g) add.dispose();
      summed.add(sum);
      held.delete(existing);
      if (!existing.kept && existing !== seed) existing.dispose();
      grads[input.outputIndex] = sum;
      held.add(sum);
    };

    for (const node of order) {
      const gradOutputs = slots.get(node);
      slots.delete(node);
      for (const g of gradOutputs ?? []) if (g) held.delete(g);
      if (!gradOutputs || gradOutputs.every((g) => g === null)) continue;
      const gradInputs = node.backward(gradOutputs);
      if (gradInputs.length !== node.inputs.length)
        throw new Error(
          `backward: ${node.name} returned ${gradInputs.length} gradients for ${node.inputs.length} inputs`,
        );
      for (let i = 0; i < node.inputs.length; i++) {
        const input = node.inputs[i];
        const g = gradInputs[i];
        if (!input || !g) continue;
        if (!sameShape(input.shape, g.shape))
          throw new Error(
            `backward: ${node.name} gave a ${formatShape(g.shape)} gradient for input ${i} of shape ${formatShape(input.shape)}`,
          );
        deliver(input, g);
      }
      // Free gradients no slot holds, no leaf adopted, and the caller did not pass in.
      for (const g of [...gradOutputs, ...gradInputs])
        if (g && !g.kept && !held.has(g) && (ownSeed || g !== seed)) g.dispose();
      if (!options.retainGraph) {
        node.release?.();
        node.inputs = [];
      }
    }
  });
  if (!options.retainGraph) root.node = null;
}

declare module '../tensor.js' {
  interface Tensor {
    backward(options?: BackwardOptions): void;
  }
}

Tensor.prototype.backward = function (this: Tensor, options?: BackwardOptions) {
  backward(this, options);
};
