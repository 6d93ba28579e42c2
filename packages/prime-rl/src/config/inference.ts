// Inference server config (`inference` entrypoint; `[inference]` of `rl`): spec config.md §3.5.
//
// Decisions (one line each):
// - Seed-era fields keep their vLLM-flavoured names and defaults; our server is an OpenAI-compatible
//   server on our own engine, so vLLM-only tuning knobs are documented as such.
// - `parallel.tp` > 1 → unsupported "tensor parallelism"; `parallel.dp` (engine replicas) is supported.
// - `weight_broadcast.nccl` → unsupported "NCCL weight broadcast"; rule I1 is still checked.
// - `gpu_memory_utilization` is the KV-cache budget; on the CPU it is a fraction of the machine's memory.
//   `model.enforce_eager` only matters on a GPU backend (CUDA graphs).
// - `vllm_extra` (E3) is a free-form table of engine arguments by vLLM's names (seed 000:
//   `--vllm-extra '{"key1": "value1"}'`); the server checks the keys it understands (docs/inference.md).
// - `output_dir` (ours) = where the server writes its logs; `rl` sets it to the run's output_dir.
// - E3 LoRA serving knobs (`enable_lora`, `max_loras`, `max_lora_rank`) are not added: adapters are not
//   served yet.
// - `server.port` is range-checked (1..65535); `model.max_model_len` must be ≥ 1.
import { dict, meta, section, z } from '@prime-rl/config';
import type { Validator } from '@prime-rl/config';
import { inferenceWeightBroadcast, modelNameField, pathField, trustRemoteCodeField } from './shared.js';

export const inferenceShape = {
  gpu_memory_utilization: z
    .number()
    .gt(0)
    .max(1)
    .default(0.9)
    .describe(
      'The fraction of GPU memory the server may use (weights and KV cache). On the CPU: the fraction of system memory, split across parallel.dp workers.',
    ),
  seed: z.int().nullable().default(null).describe('Seed the inference components. If None, no seeding is used.'),
  output_dir: pathField()
    .default('outputs')
    .describe('Directory to write outputs to; the server writes its logs to <output_dir>/logs.'),
  server: section(
    {
      host: z
        .string()
        .min(1)
        .nullable()
        .default(null)
        .describe("The host to bind to. If None, uses the server's default."),
      port: z.int().min(1).max(65535).default(8000).describe('The port to bind to.'),
    },
    'HTTP server configuration',
  ),
  model: section(
    {
      name: modelNameField(),
      dtype: z
        .enum(['auto', 'float16', 'bfloat16', 'float32'])
        .default('auto')
        .describe(
          "Data type for model weights and activations. If 'auto', uses FP16 for FP32/FP16 models, BF16 for BF16 models.",
        ),
      max_model_len: z
        .int()
        .min(1)
        .nullable()
        .default(null)
        .describe('Maximum model context length. If None, uses the maximum context length from model config.'),
      enforce_eager: z
        .boolean()
        .default(false)
        .describe('Whether to enforce eager mode (no CUDA graphs). No effect on CPU.'),
      trust_remote_code: trustRemoteCodeField('the model and tokenizer'),
      enable_auto_tool_choice: z.boolean().default(false).describe('Whether to enable auto tool choice.'),
      tool_call_parser: z.string().min(1).default('hermes').describe('The tool call parser to use.'),
    },
    'Model to serve',
  ),
  parallel: section(
    {
      tp: meta(z.int().min(1).default(1), { unsupported: 'tensor parallelism' }).describe('The tensor parallel size.'),
      dp: z.int().min(1).default(1).describe('The data parallel size (number of engine replicas).'),
    },
    'Parallelism of the inference engine',
  ),
  weight_broadcast: inferenceWeightBroadcast(),
  vllm_extra: dict(
    'Extra engine arguments by vLLM name (CLI: a JSON object). Our engine takes max_num_seqs, max_num_batched_tokens and num_threads.',
  ),
};

export const inferenceSchema = z.strictObject(inferenceShape);
export type InferenceConfig = z.output<typeof inferenceSchema>;

/** I1. */
export const ncclSingleDp: Validator<InferenceConfig> = (cfg, ctx) => {
  if (cfg.weight_broadcast.type === 'nccl' && cfg.parallel.dp !== 1) {
    ctx.error([], 'NCCL broadcast backend requires data parallel size to be 1');
  }
};

export const inferenceValidators: ReadonlyArray<Validator<InferenceConfig>> = [ncclSingleDp];
