# PyTorch-CPU inference anchor: greedy decoding with a KV cache, eager mode, of a Qwen3 / Qwen2 / Llama
# model directory written by savePretrained (config.json + model.safetensors, read by parsing the
# safetensors header here; no transformers or safetensors package needed).
# Usage: JSON lines on stdin, each answered by one line on stdout; the first sets up, every further one is a run:
#   {"model_dir": "...", "threads": 2}  ->  {"torch": "1.13.0"}
#   {"name": "decode_b32", "prompts": [[ids], ...], "max_new": 128, "repeats": 1, "warmup": 0}
# -> {"name", "ttft_ms": [per repeat], "decode_tokens_per_s": [per repeat], "tokens": [[generated ids] per prompt]}
# Every prompt of a run has the same length (no padding). ttft_ms: from allocating the cache and prefilling
# the whole batch until the first tokens are chosen; decode_tokens_per_s: the tokens generated after the
# first ones, over the time from the first token to the last.
import json, math, os, struct, sys, time
import torch
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        flat = torch.frombuffer(bytearray(data[base + begin : base + end]), dtype=dtype)
        out[name] = flat.reshape(info["shape"]).float()
    return out


def read_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for file in files:
        weights.update(read_safetensors(os.path.join(model_dir, file)))
    return weights


class Decoder:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            c = json.load(f)
        w = read_weights(model_dir)
        self.layers = c["num_hidden_layers"]
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads", self.heads)
        self.head_dim = c.get("head_dim") or c["hidden_size"] // self.heads
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.qk_norm = c["model_type"] == "qwen3"
        theta = c.get("rope_theta", 10000.0)
        self.inv_freq = 1.0 / theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        self.emb = w["model.embed_tokens.weight"]
        self.head = self.emb if c.get("tie_word_embeddings", False) else w["lm_head.weight"]
        self.norm = w["model.norm.weight"]
        self.w = w

    def rms(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * weight

    def linear(self, x, name):
        return F.linear(x, self.w[name + ".weight"], self.w.get(name + ".bias"))

    def rope(self, x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def forward(self, ids, start, cache):
        """Logits of the last position of every row for tokens ids [B, T] at positions start..start+T-1."""
        B, T = ids.shape
        H, KV, D = self.heads, self.kv_heads, self.head_dim
        G = H // KV
        freqs = torch.arange(start, start + T).float()[:, None] * self.inv_freq[None]
        cos, sin = freqs.cos().repeat(1, 2), freqs.sin().repeat(1, 2)
        x = F.embedding(ids, self.emb)
        mask = None
        if T > 1:
            keys = torch.arange(start + T)
            mask = torch.zeros(T, start + T).masked_fill(keys[None] > (start + torch.arange(T))[:, None], float("-inf"))
        for i in range(self.layers):
            p = f"model.layers.{i}."
            y = self.rms(x, self.w[p + "input_layernorm.weight"])
            q = self.linear(y, p + "self_attn.q_proj").view(B, T, H, D)
            k = self.linear(y, p + "self_attn.k_proj").view(B, T, KV, D)
            v = self.linear(y, p + "self_attn.v_proj").view(B, T, KV, D)
            if self.qk_norm:
                q = self.rms(q, self.w[p + "self_attn.q_norm.weight"])
                k = self.rms(k, self.w[p + "self_attn.k_norm.weight"])
            q = self.rope(q.transpose(1, 2), cos, sin)  # [B, H, T, D]
            k = self.rope(k.transpose(1, 2), cos, sin)  # [B, KV, T, D]
            cache_k, cache_v = cache[i]
            cache_k[:, :, start : start + T] = k
            cache_v[:, :, start : start + T] = v.transpose(1, 2)
            keys, values = cache_k[:, :, : start + T], cache_v[:, :, : start + T]
            # Grouped-query attention without repeating K/V: head h reads kv head h // G.
            att = (q.reshape(B, KV, G, T, D) @ keys.unsqueeze(2).transpose(-1, -2)) / math.sqrt(D)
            if mask is not None:
                att = att + mask
            a = (att.softmax(-1) @ values.unsqueeze(2)).reshape(B, H, T, D).transpose(1, 2).reshape(B, T, H * D)
            x = x + self.linear(a, p + "self_attn.o_proj")
            y = self.rms(x, self.w[p + "post_attention_layernorm.weight"])
            x = x + self.linear(F.silu(self.linear(y, p + "mlp.gate_proj")) * self.linear(y, p + "mlp.up_proj"), p + "mlp.down_proj")
        return F.linear(self.rms(x[:, -1], self.norm), self.head)

    def generate(self, prompts, max_new):
        ids = torch.tensor(prompts, dtype=torch.long)
        B, T0 = ids.shape
        start = time.perf_counter()
        shape = (B, self.kv_heads, T0 + max_new, self.head_dim)
        cache = [(torch.zeros(shape), torch.zeros(shape)) for _ in range(self.layers)]
        token = self.forward(ids, 0, cache).argmax(-1)
        first = time.perf_counter()
        out = [token]
        for step in range(1, max_new):
            token = self.forward(token[:, None], T0 + step - 1, cache).argmax(-1)
            out.append(token)
        end = time.perf_counter()
        tokens = torch.stack(out, 1).tolist()
        decode = B * (max_new - 1) / (end - first) if max_new > 1 else None
        return tokens, (first - start) * 1000, decode


def main():
    setup = json.loads(sys.stdin.readline())
    torch.set_num_threads(int(setup["threads"]))
    model = Decoder(setup["model_dir"])
    print(json.dumps({"torch": torch.__version__}), flush=True)
    with torch.inference_mode():
        for line in iter(sys.stdin.readline, ""):
            if not line.strip():
                continue
            run = json.loads(line)
            prompts, max_new = run["prompts"], run["max_new"]
            if len({len(p) for p in prompts}) != 1:
                raise SystemExit("torch_decode_anchor: prompts of one run must have the same length")
            for _ in range(run.get("warmup", 0)):
                model.generate(prompts, min(max_new, 4))
            ttft, decode, tokens = [], [], None
            for _ in range(run.get("repeats", 1)):
                tokens, t, d = model.generate(prompts, max_new)
                ttft.append(t)
                if d is not None:
                    decode.append(d)
            print(json.dumps({"name": run["name"], "ttft_ms": ttft, "decode_tokens_per_s": decode, "tokens": tokens}), flush=True)


if __name__ == "__main__":
    main()
