// Prometheus text-format metrics of the inference server: requests by route and status, finished
// sequences by finish reason, client disconnects, and per engine worker the running and waiting
// sequences, KV-cache usage, prompt and generated tokens and engine steps.
import type { GenerationResult } from '@prime-rl/lm';
import type { WorkerStats } from './protocol.js';

export class ServerMetrics {
  private readonly requests = new Map<string, number>();
  private readonly finishes = new Map<string, number>();
  disconnects = 0;

  request(route: string, status: number): void {
    const key = `route="${route}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  finished(result: GenerationResult): void {
    this.finishes.set(result.finishReason, (this.finishes.get(result.finishReason) ?? 0) + 1);
  }

  render(workers: WorkerStats[], size: number, inFlight: number): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: [string, number][]): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels ? `{${labels}}` : ''} ${value}`);
    };
    const perWorker = (pick: (s: WorkerStats) => number): [string, number][] =>
      workers.slice(0, size).map((s, rank) => [`rank="${rank}"`, pick(s)]);
    metric('inference_requests_total', 'counter', 'HTTP requests by route and status.', [...this.requests]);
    metric(
      'inference_sequences_finished_total',
      'counter',
      'Generated sequences by finish reason.',
      [...this.finishes].map(([reason, n]) => [`finish_reason="${reason}"`, n]),
    );
    metric('inference_client_disconnects_total', 'counter', 'Requests whose client went away before the answer.', [
      ['', this.disconnects],
    ]);
    metric(
      'inference_num_requests_running',
      'gauge',
      'Sequences holding a KV-cache slot.',
      perWorker((s) => s.running),
    );
    metric(
      'inference_num_requests_waiting',
      'gauge',
      'Sequences queued for a KV-cache slot.',
      perWorker((s) => s.waiting),
    );
    metric(
      'inference_kv_cache_usage_perc',
      'gauge',
      'Fraction of KV-cache token positions in use (0..1).',
      perWorker((s) => s.cacheUsage),
    );
    metric(
      'inference_prompt_tokens_total',
      'counter',
      'Prompt tokens received.',
      perWorker((s) => s.promptTokens),
    );
    metric(
      'inference_generation_tokens_total',
      'counter',
      'Tokens generated.',
      perWorker((s) => s.generationTokens),
    );
    metric(
      'inference_engine_steps_total',
      'counter',
      'Engine forward steps.',
      perWorker((s) => s.steps),
    );
    metric(
      'inference_worker_resident_memory_bytes',
      'gauge',
      'Resident memory of each engine worker (as of its last step).',
      perWorker((s) => s.residentBytes),
    );
    metric(
      'inference_worker_live_tensors',
      'gauge',
      'Tensors alive in each engine worker.',
      perWorker((s) => s.liveTensors),
    );
    metric(
      'inference_worker_pooled_bytes',
      'gauge',
      'Free tensor buffers each engine worker keeps for reuse.',
      perWorker((s) => s.pooledBytes),
    );
    metric('inference_requests_in_flight', 'gauge', 'Sequences submitted to the engines and not finished.', [
      ['', inFlight],
    ]);
    metric('process_resident_memory_bytes', 'gauge', 'Resident memory of the HTTP front end.', [
      ['', process.memoryUsage.rss()],
    ]);
    return lines.join('\n') + '\n';
  }
}
