#!/usr/bin/env python3
"""Writes two tiny random checkpoints in Hugging Face layout, and what PyTorch computes for them:

  packages/lm/test/fixtures/hf-qwen3-tiny/   Qwen3: q/k-norm, GQA, untied LM head, bf16 weights,
                                             one model.safetensors, generation_config.json
  packages/lm/test/fixtures/hf-llama-tiny/   Llama: attention_bias=true, untied, f32 weights,
                                             sharded (model-0000N-of-00002.safetensors + index)
  packages/lm/test/fixtures/hf-*-tiny.expected.safetensors   input ids [2, 10] and float32 logits

The reference forward below follows transformers' Qwen3ForCausalLM / LlamaForCausalLM (eager
attention, rotate-half RoPE, SwiGLU), computed in float64 from the stored weights and rounded to
float32. Our loader must read these directories and reproduce the logits.

Run from the repository root with the system Python (torch, CPU):
    /usr/bin/python3 packages/lm/scripts/make-hf-parity-fixtures.py
"""

import json
import math
import os
import struct
import tempfile

import torch

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures")
GENERATOR = "packages/lm/scripts/make-hf-parity-fixtures.py"

QWEN3 = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_act": "silu",
    "vocab_size": 80,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 64,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "rope_scaling": None,
    "attention_bias": False,
    "tie_word_embeddings": False,
    "max_position_embeddings": 512,
    "use_sliding_window": False,
    "sliding_window": None,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
}
LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_act": "silu",
    "vocab_size": 72,
    "hidden_size": 40,
    "num_hidden_layers": 3,
    "num_attention_heads": 5,
    "num_key_value_heads": 1,
    "intermediate_size": 56,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "rope_scaling": None,
    "attention_bias": True,
    "mlp_bias": False,
    "tie_word_embeddings": False,
    "max_position_embeddings": 256,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "torch_dtype": "float32",
    "transformers_version": "4.51.0",
}
GENERATION = {"bos_token_id": 1, "eos_token_id": 2, "do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 20}


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def parameters(c, seed):
    g = torch.Generator().manual_seed(seed)
    d, hd, h, kv, inter = c["hidden_size"], head_dim(c), c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
    qwen3 = c["model_type"] == "qwen3"
    bias = c.get("attention_bias", False)
    shapes = [("model.embed_tokens.weight", (c["vocab_size"], d))]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.append((p + "input_layernorm.weight", (d,)))
        for name, shape in [("q_proj", (h * hd, d)), ("k_proj", (kv * hd, d)), ("v_proj", (kv * hd, d)), ("o_proj", (d, h * hd))]:
            shapes.append((p + f"self_attn.{name}.weight", shape))
            if bias:
                shapes.append((p + f"self_attn.{name}.bias", (shape[0],)))
        if qwen3:
            shapes += [(p + "self_attn.q_norm.weight", (hd,)), (p + "self_attn.k_norm.weight", (hd,))]
        shapes.append((p + "post_attention_layernorm.weight", (d,)))
        shapes += [(p + "mlp.gate_proj.weight", (inter, d)), (p + "mlp.up_proj.weight", (inter, d)), (p + "mlp.down_proj.weight", (d, inter))]
    shapes.append(("model.norm.weight", (d,)))
    if not c["tie_word_embeddings"]:
        shapes.append(("lm_head.weight", (c["vocab_size"], d)))
    out = {}
    for name, shape in shapes:
        if name.endswith("norm.weight"):
            out[name] = 1.0 + 0.1 * torch.randn(shape, generator=g)
        elif name.endswith(".bias"):
            out[name] = 0.05 * torch.randn(shape, generator=g)
        else:
            out[name] = 0.1 * torch.randn(shape, generator=g)
    return out


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, theta):
    """x: [B, T, heads, d], positions 0..T-1 (transformers' rotate_half convention)."""
    t, d = x.shape[1], x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    freqs = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def forward(c, p, ids):
    b, t = ids.shape
    d, hd, h, kv, eps = c["hidden_size"], head_dim(c), c["num_attention_heads"], c["num_key_value_heads"], c["rms_norm_eps"]
    qwen3 = c["model_type"] == "qwen3"

    def linear(x, name):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if name + ".bias" in p else y

    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    x = p["model.embed_tokens.weight"][ids]
    for i in range(c["num_hidden_layers"]):
        pre = f"model.layers.{i}."
        y = rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q = linear(y, pre + "self_attn.q_proj").view(b, t, h, hd)
        k = linear(y, pre + "self_attn.k_proj").view(b, t, kv, hd)
        v = linear(y, pre + "self_attn.v_proj").view(b, t, kv, hd)
        if qwen3:
            q = rms_norm(q, p[pre + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, p[pre + "self_attn.k_norm.weight"], eps)
        q, k = rope(q, c["rope_theta"]), rope(k, c["rope_theta"])
        k, v = k.repeat_interleave(h // kv, dim=2), v.repeat_interleave(h // kv, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        x = x + linear((probs @ v).transpose(1, 2).reshape(b, t, h * hd), pre + "self_attn.o_proj")
        y = rms_norm(x, p[pre + "post_attention_layernorm.weight"], eps)
        x = x + linear(torch.nn.functional.silu(linear(y, pre + "mlp.gate_proj")) * linear(y, pre + "mlp.up_proj"), pre + "mlp.down_proj")
    head = p["model.embed_tokens.weight"] if c["tie_word_embeddings"] else p["lm_head.weight"]
    return rms_norm(x, p["model.norm.weight"], eps) @ head.T


# ----------------------------------------------------------------------------- files

DTYPE_NAME = {torch.float32: "F32", torch.bfloat16: "BF16", torch.int32: "I32"}
DTYPE_RANK = {"F32": 4, "I32": 4, "BF16": 2}


def tensor_bytes(t):
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().tobytes()
    return t.contiguous().numpy().tobytes()


def serialize_safetensors(tensors, metadata):
    """The reference layout: 8-byte LE header length, compact JSON padded with spaces to a multiple of
    8, tensors ordered by descending dtype alignment then name."""
    entries = [(name, DTYPE_NAME[t.dtype], list(t.shape), tensor_bytes(t)) for name, t in tensors.items()]
    entries.sort(key=lambda e: (-DTYPE_RANK[e[1]], e[0].encode("utf-8")))
    header = {"__metadata__": dict(sorted(metadata.items()))}
    offset = 0
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    return struct.pack("<Q", len(header_bytes)) + header_bytes + b"".join(e[3] for e in entries)


def write_atomically(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".fixture.", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def write_json(path, value):
    write_atomically(path, json.dumps(value, indent=2) + "\n")


def make(name, config, seed, dtype, shards):
    directory = os.path.join(FIXTURES, name)
    params = {k: v.to(dtype) for k, v in parameters(config, seed).items()}
    names = list(params)
    if shards == 1:
        write_atomically(os.path.join(directory, "model.safetensors"), serialize_safetensors(params, {"format": "pt"}))
    else:
        split = math.ceil(len(names) / shards)
        weight_map, total = {}, 0
        for s in range(shards):
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = {n: params[n] for n in names[s * split : (s + 1) * split]}
            write_atomically(os.path.join(directory, file), serialize_safetensors(part, {"format": "pt"}))
            for n, t in part.items():
                weight_map[n] = file
                total += t.numel() * t.element_size()
        write_json(os.path.join(directory, "model.safetensors.index.json"), {"metadata": {"total_size": total}, "weight_map": weight_map})
    write_json(os.path.join(directory, "config.json"), config)
    write_json(os.path.join(directory, "generation_config.json"), GENERATION)

    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, config["vocab_size"], (2, 10), generator=g, dtype=torch.int64)
    logits = forward(config, {k: v.to(torch.float64) for k, v in params.items()}, ids).to(torch.float32)
    expected = {"input_ids": ids.to(torch.int32), "logits": logits}
    write_atomically(os.path.join(FIXTURES, f"{name}.expected.safetensors"), serialize_safetensors(expected, {"generator": GENERATOR}))
    print(f"wrote {directory} ({len(names)} tensors, {dtype}) and its expected logits {list(logits.shape)}")


def main():
    torch.manual_seed(0)
    make("hf-qwen3-tiny", QWEN3, 1234, torch.bfloat16, 1)
    make("hf-llama-tiny", LLAMA, 4321, torch.float32, 2)


if __name__ == "__main__":
    main()
