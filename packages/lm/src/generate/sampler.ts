// Picks the next token from one row of logits, following vLLM's sampler: log-probabilities of the raw
// tempered distribution first (what the trainer recomputes), then penalties and the min_tokens mask on a
// copy, then greedy argmax or temperature → top-k → top-p → min-p → one inverse-CDF draw.
import { Generator, defaultGenerator } from '@prime-rl/tensor';
import { isGreedy, type SamplingParams } from './sampling-params.js';

export interface TokenLogprob {
  token: number;
  logprob: number;
}

export interface SampledToken {
  token: number;
  /** log_softmax(logits / T)[token] over the full vocabulary, before penalties and truncation. */
  logprob: number;
  /** The params.logprobs most likely tokens of that same distribution, descending, ties by lower id. */
  topLogprobs?: TokenLogprob[];
}

export interface SamplerContext {
  /** Length of each logits row. */
  vocabSize: number;
  /** Tokens that end generation; masked until minTokens tokens were generated. */
  eosTokenIds: readonly number[];
  /** The prompt, for the repetition penalty. */
  promptIds: ArrayLike<number>;
}

/** One per request: holds the request's random stream and its running counts of generated tokens. */
export class Sampler {
  readonly params: SamplingParams;
  private readonly vocabSize: number;
  private readonly rng: Generator;
  private readonly greedy: boolean;
  /** Divides the logits, for the returned log-probabilities and for sampling; 1 when greedy. */
  private readonly temperature: number;
  private readonly topK: number;
  /** EOS and stop token ids, deduplicated: masked while fewer than minTokens tokens were generated. */
  private readonly blockedBeforeMinTokens: number[];
  private readonly uniquePromptIds: number[];
  private readonly promptIdSet: Set<number>;
  private readonly penaltiesActive: boolean;
  /** Generated token → count, kept up to date incrementally because generatedIds only grows. */
  private readonly generatedCounts = new Map<number, number>();
  private countedLength = 0;
  private lastCountedToken = -1;

  constructor(params: SamplingParams, context: SamplerContext) {
    const { vocabSize, eosTokenIds, promptIds } = context;
    if (!Number.isSafeInteger(vocabSize) || vocabSize < 1) {
      throw new RangeError(`Sampler: vocabSize must be a positive integer, got ${vocabSize}`);
    }
    this.params = params;
    this.vocabSize = vocabSize;
    this.rng = requestGenerator(params.seed);
    this.greedy = isGreedy(params);
    this.temperature = this.greedy ? 1 : params.temperature;
    this.topK = params.topK > 0 && params.topK < vocabSize ? params.topK : 0;

    const blocked = new Set<number>();
    for (const id of [...eosTokenIds, ...params.stopTokenIds]) {
      requireTokenId(id, vocabSize, 'stop or EOS token id');
      blocked.add(id);
    }
    this.blockedBeforeMinTokens = [...blocked];

    this.penaltiesActive =
      params.repetitionPenalty !== 1 || params.presencePenalty !== 0 || params.frequencyPenalty !== 0;
    this.promptIdSet = new Set<number>();
    if (params.repetitionPenalty !== 1) {
      for (let i = 0; i < promptIds.length; i++) {
        const id = promptIds[i] as number;
        requireTokenId(id, vocabSize, 'prompt token id');
        this.promptIdSet.add(id);
      }
    }
    this.uniquePromptIds = [...this.promptIdSet];
  }

  /**
   * Samples the next token. `logits` is one row of length vocabSize (a subarray view is fine) and is
   * not modified; `generatedIds` are the tokens this request generated so far (it is expected to grow by
   * appending between calls; anything else triggers a recount).
   */
  sample(logits: Float32Array, generatedIds: ArrayLike<number>): SampledToken {
    const vocabSize = this.vocabSize;
    if (logits.length !== vocabSize) {
      throw new RangeError(`Sampler: expected ${vocabSize} logits, got ${logits.length}`);
    }
    const scratch = sharedScratch(vocabSize);
    const weights = scratch.weights;
    const inverseTemperature = 1 / this.temperature;

    // 1. The returned distribution, log_softmax(logits / T), in float64 with the max subtracted. The
    //    unnormalised probabilities are kept: without penalties they are also the sampling weights.
    let maxLogit = -Infinity;
    let argmax = 0;
    for (let i = 0; i < vocabSize; i++) {
      const x = logits[i] as number;
      if (x > maxLogit) {
        maxLogit = x;
        argmax = i;
      }
    }
    let totalWeight = 0;
    for (let i = 0; i < vocabSize; i++) {
      const w = Math.exp(((logits[i] as number) - maxLogit) * inverseTemperature);
      weights[i] = w;
      totalWeight += w;
    }
    if (!(totalWeight >= 1 && totalWeight < Infinity)) {
      throw new RangeError('Sampler: logits contain NaN or +Infinity, or are all -Infinity');
    }
    const logNormalizer = Math.log(totalWeight);
    const logprobOf = (token: number): number =>
      ((logits[token] as number) - maxLogit) * inverseTemperature - logNormalizer;

    // 2. Penalties and the min_tokens mask, on a float64 copy; the weights follow.
    if (this.penaltiesActive) this.countGeneratedTokens(generatedIds);
    const blockStops = generatedIds.length < this.params.minTokens && this.blockedBeforeMinTokens.length > 0;
    const hasPenalisedTokens = this.penaltiesActive && (this.promptIdSet.size > 0 || this.generatedCounts.size > 0);
    if (hasPenalisedTokens || blockStops) {
      const penalized = scratch.penalized;
      penalized.set(logits);
      const touched = scratch.touched;
      touched.length = 0;
      if (hasPenalisedTokens) this.applyPenalties(penalized, touched);
      if (blockStops) {
        for (const id of this.blockedBeforeMinTokens) {
          penalized[id] = -Infinity;
          touched.push(id);
        }
      }
      let penalizedMax = -Infinity;
      argmax = 0;
      for (let i = 0; i < vocabSize; i++) {
        const x = penalized[i] as number;
        if (x > penalizedMax) {
          penalizedMax = x;
          argmax = i;
        }
      }
      if (penalizedMax === -Infinity) throw new RangeError('Sampler: every token is masked');
      if (!this.greedy) {
        totalWeight = reweight(weights, penalized, touched, vocabSize, maxLogit, penalizedMax, inverseTemperature);
      }
    }

    // 3. Choose.
    const token = this.greedy ? argmax : this.sampleFromWeights(scratch, argmax, totalWeight);

    const result: SampledToken = { token, logprob: logprobOf(token) };
    if (this.params.logprobs !== null) {
      const count = Math.min(this.params.logprobs, vocabSize);
      const top = new Int32Array(count);
      selectTop(logits, vocabSize, count, top);
      result.topLogprobs = Array.from(top, (id) => ({ token: id, logprob: logprobOf(id) }));
    }
    return result;
  }

  /** Repetition penalty over prompt ∪ generated, then frequency and presence over generated (vLLM's order). */
  private applyPenalties(penalized: Float64Array, touched: number[]): void {
    const { repetitionPenalty, frequencyPenalty, presencePenalty } = this.params;
    if (repetitionPenalty !== 1) {
      const penalize = (id: number): void => {
        const x = penalized[id] as number;
        penalized[id] = x > 0 ? x / repetitionPenalty : x * repetitionPenalty;
      };
      for (const id of this.uniquePromptIds) {
        penalize(id);
        touched.push(id);
      }
      for (const id of this.generatedCounts.keys()) {
        if (this.promptIdSet.has(id)) continue;
        penalize(id);
        touched.push(id);
      }
    }
    if (frequencyPenalty !== 0 || presencePenalty !== 0) {
      for (const [id, count] of this.generatedCounts) {
        penalized[id] = (penalized[id] as number) - (frequencyPenalty * count + presencePenalty);
        // With a repetition penalty every generated id is already in touched.
        if (repetitionPenalty === 1) touched.push(id);
      }
    }
  }

  private countGeneratedTokens(generatedIds: ArrayLike<number>): void {
    const length = generatedIds.length;
    const stillAPrefix =
      length >= this.countedLength &&
      (this.countedLength === 0 || generatedIds[this.countedLength - 1] === this.lastCountedToken);
    if (!stillAPrefix) {
      this.generatedCounts.clear();
      this.countedLength = 0;
    }
    for (let i = this.countedLength; i < length; i++) {
      const id = generatedIds[i] as number;
      requireTokenId(id, this.vocabSize, 'generated token id');
      this.generatedCounts.set(id, (this.generatedCounts.get(id) ?? 0) + 1);
    }
    this.countedLength = length;
    this.lastCountedToken = length > 0 ? (generatedIds[length - 1] as number) : -1;
  }

  /**
   * Top-k, then top-p, then min-p over the weights (unnormalised probabilities, the most likely token's
   * being 1), then one uniform draw by inverse CDF over the kept tokens: from most to least likely when
   * top-k selected them, otherwise in id order.
   */
  private sampleFromWeights(scratch: Scratch, argmax: number, totalWeight: number): number {
    const { topP, minP } = this.params;
    const { weights, candidates } = scratch;
    const vocabSize = this.vocabSize;
    // Kept tokens are candidates[0, kept), or the whole vocabulary while kept is null.
    let kept: number | null = null;

    if (this.topK > 0) {
      kept = selectTop(weights, vocabSize, this.topK, candidates);
      if (topP < 1) kept = nucleusPrefix(weights, candidates, kept, topP * sumOver(weights, candidates, kept));
    } else if (topP < 1) {
      kept = collectNucleus(scratch, vocabSize, topP * totalWeight);
    }

    if (minP > 0) {
      const threshold = minP * (weights[argmax] as number);
      if (kept === null) {
        kept = 0;
        for (let i = 0; i < vocabSize; i++) if ((weights[i] as number) >= threshold) candidates[kept++] = i;
      } else {
        // The most likely token passes, so at least one survives.
        let survivors = 0;
        for (let i = 0; i < kept; i++) {
          const id = candidates[i] as number;
          if ((weights[id] as number) >= threshold) candidates[survivors++] = id;
        }
        kept = survivors;
      }
    }

    const u = this.rng.uniform();
    if (kept === null) return inverseCdf(weights, null, vocabSize, u * totalWeight);
    return inverseCdf(weights, candidates, kept, u * sumOver(weights, candidates, kept));
  }
}

/**
 * Brings the weights, exp((logit - maxLogit) / T) for the raw logits, to exp((penalized - penalizedMax) / T)
 * and returns their sum. Only the touched tokens' logits changed, so unless the reference point moved far
 * (where rescaling would lose tokens that underflowed) one multiply pass replaces a pass of exp.
 */
function reweight(
  weights: Float64Array,
  penalized: Float64Array,
  touched: readonly number[],
  vocabSize: number,
  maxLogit: number,
  penalizedMax: number,
  inverseTemperature: number,
): number {
  const shift = (maxLogit - penalizedMax) * inverseTemperature;
  if (shift > MAX_RESCALE_SHIFT) {
    let total = 0;
    for (let i = 0; i < vocabSize; i++) {
      const w = Math.exp(((penalized[i] as number) - penalizedMax) * inverseTemperature);
      weights[i] = w;
      total += w;
    }
    return total;
  }
  if (shift !== 0) {
    const factor = Math.exp(shift);
    for (let i = 0; i < vocabSize; i++) weights[i] = (weights[i] as number) * factor;
  }
  for (const id of touched) weights[id] = Math.exp(((penalized[id] as number) - penalizedMax) * inverseTemperature);
  let total = 0;
  for (let i = 0; i < vocabSize; i++) total += weights[i] as number;
  return total;
}

/**
 * Largest upward rescale of the weights, in nats. Weights that underflowed before it were below e^-708
 * and stay below e^-400 of the most likely token's after it: negligible either way.
 */
const MAX_RESCALE_SHIFT = 300;

/**
 * A request's own random stream: `new Generator(seed)` when seeded (bits above 2³² folded in), otherwise
 * one seeded from @prime-rl/tensor's process-wide defaultGenerator, so unseeded requests differ from each
 * other while manualSeed still makes a whole run reproducible.
 */
function requestGenerator(seed: number | null): Generator {
  if (seed === null) return new Generator(defaultGenerator.nextUint32());
  // Fold the high bits in so that seeds beyond 32 bits still differ.
  const high = Math.floor(seed / 2 ** 32);
  return new Generator((seed >>> 0) ^ Math.imul(high, 0x9e3779b9));
}

function requireTokenId(id: number, vocabSize: number, what: string): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new RangeError(`Sampler: ${what} ${id} is outside the vocabulary of ${vocabSize}`);
  }
}

/**
 * Scratch buffers sized to the vocabulary, shared by every Sampler: sample() is synchronous, so one set
 * per thread suffices, and a batch of requests does not cost a vocabulary-sized copy each.
 */
interface Scratch {
  weights: Float64Array;
  /** The weights' 32-bit words, for reading their binary exponents. */
  weightWords: Uint32Array;
  penalized: Float64Array;
  candidates: Int32Array;
  /** Token ids whose logits the penalties or the mask changed in this call. */
  touched: number[];
  /** Probability mass per binary exponent of the weights. */
  massByExponent: Float64Array;
  /** The weights at one binary exponent, for sorting. */
  bucketWeights: Float64Array;
}

let scratchBuffers: Scratch | null = null;

function sharedScratch(vocabSize: number): Scratch {
  if (scratchBuffers === null || scratchBuffers.weights.length < vocabSize) {
    const weights = new Float64Array(vocabSize);
    scratchBuffers = {
      weights,
      weightWords: new Uint32Array(weights.buffer),
      penalized: new Float64Array(vocabSize),
      candidates: new Int32Array(vocabSize),
      touched: [],
      massByExponent: new Float64Array(EXPONENT_COUNT),
      bucketWeights: new Float64Array(vocabSize),
    };
  }
  return scratchBuffers;
}

const EXPONENT_COUNT = 2048;
/** Index of the 32-bit word holding a float64's sign and exponent. */
const HIGH_WORD = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f ? 1 : 0;

/**
 * Writes the ids of the `count` largest values, descending with ties by lower id, to out[0, count), and
 * returns count. A min-heap of the best so far keeps this O(n log count) rather than a full sort.
 */
function selectTop(values: Float32Array | Float64Array, n: number, count: number, out: Int32Array): number {
  if (count <= 0) return 0;
  // The heap's root is the worst kept id: the smallest value, ties by the higher id.
  const worse = (a: number, b: number): boolean => {
    const va = values[a] as number;
    const vb = values[b] as number;
    return va < vb || (va === vb && a > b);
  };
  const siftDown = (start: number, size: number): void => {
    let parent = start;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= size) return;
      const right = left + 1;
      const child = right < size && worse(out[right] as number, out[left] as number) ? right : left;
      if (!worse(out[child] as number, out[parent] as number)) return;
      const swap = out[parent] as number;
      out[parent] = out[child] as number;
      out[child] = swap;
      parent = child;
    }
  };
  for (let i = 0; i < count; i++) out[i] = i;
  for (let i = (count >> 1) - 1; i >= 0; i--) siftDown(i, count);
  for (let i = count; i < n; i++) {
    // Ids arrive in increasing order, so a tie with the root never displaces it.
    if ((values[i] as number) > (values[out[0] as number] as number)) {
      out[0] = i;
      siftDown(0, count);
    }
  }
  sortDescending(values, out, count);
  return count;
}

function sortDescending(values: Float32Array | Float64Array, ids: Int32Array, count: number): void {
  ids.subarray(0, count).sort((a, b) => (values[b] as number) - (values[a] as number) || a - b);
}

function sumOver(weights: Float64Array, ids: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += weights[ids[i] as number] as number;
  return sum;
}

/** Length of the shortest prefix of the sorted ids whose weights reach target (at least 1). */
function nucleusPrefix(weights: Float64Array, sortedIds: Int32Array, count: number, target: number): number {
  let cumulative = 0;
  for (let i = 0; i < count; i++) {
    cumulative += weights[sortedIds[i] as number] as number;
    if (cumulative >= target) return i + 1;
  }
  return count;
}

/**
 * Top-p over the whole vocabulary without sorting it. A histogram of probability mass by binary exponent
 * finds the scale at which the cumulative mass reaches the target; only that scale's weights are sorted
 * (natively) to find the exact threshold. Writes the nucleus to scratch.candidates in id order (the tokens
 * above the threshold and the lowest-id ties at it) and returns its size.
 */
function collectNucleus(scratch: Scratch, vocabSize: number, target: number): number {
  const { weights, weightWords, candidates, massByExponent, bucketWeights } = scratch;
  // Weights are in [0, 1], so the sign bit is clear and the high word's top bits are the exponent.
  const exponentOf = (i: number): number => (weightWords[2 * i + HIGH_WORD] as number) >>> 20;
  massByExponent.fill(0);
  for (let i = 0; i < vocabSize; i++) {
    const exponent = exponentOf(i);
    massByExponent[exponent] = (massByExponent[exponent] as number) + (weights[i] as number);
  }
  // If rounding keeps the cumulative mass just short of the target, the cutoff ends at the lowest
  // exponent with mass, and every token with weight is kept.
  let cutoff = EXPONENT_COUNT - 1;
  let massAbove = 0;
  for (let exponent = EXPONENT_COUNT - 1; exponent >= 0; exponent--) {
    const mass = massByExponent[exponent] as number;
    if (mass === 0) continue;
    cutoff = exponent;
    if (massAbove + mass >= target) break;
    massAbove += mass;
  }

  let bucketSize = 0;
  for (let i = 0; i < vocabSize; i++) {
    const w = weights[i] as number;
    if (w > 0 && exponentOf(i) === cutoff) bucketWeights[bucketSize++] = w;
  }
  const sorted = bucketWeights.subarray(0, bucketSize).sort();
  let cumulative = massAbove;
  let threshold = Infinity;
  let tiesAtThreshold = 0;
  for (let j = bucketSize - 1; j >= 0; j--) {
    const w = sorted[j] as number;
    if (w !== threshold) {
      threshold = w;
      tiesAtThreshold = 0;
    }
    tiesAtThreshold++;
    cumulative += w;
    if (cumulative >= target) break;
  }

  let count = 0;
  for (let i = 0; i < vocabSize; i++) {
    const w = weights[i] as number;
    if (w > threshold) {
      candidates[count++] = i;
    } else if (w === threshold && tiesAtThreshold > 0) {
      candidates[count++] = i;
      tiesAtThreshold--;
    }
  }
  return count;
}

/**
 * The first token at which the running sum of weights exceeds target, walking ids (or 0..n when ids is
 * null) in order. Rounding can leave target at the very end; then the last token with weight is chosen.
 */
function inverseCdf(weights: Float64Array, ids: Int32Array | null, n: number, target: number): number {
  let cumulative = 0;
  let lastWithWeight = -1;
  for (let i = 0; i < n; i++) {
    const id = ids === null ? i : (ids[i] as number);
    const w = weights[id] as number;
    if (w <= 0) continue;
    cumulative += w;
    lastWithWeight = id;
    if (target < cumulative) return id;
  }
  return lastWithWeight;
}
