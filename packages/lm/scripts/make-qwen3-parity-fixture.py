#!/usr/bin/env python3
"""Writes packages/lm/test/fixtures/qwen3-tiny-parity.safetensors: a tiny Qwen3-style decoder (random
weights), a batch with one plain row and one row of three packed documents, and what PyTorch computes
for it in float32 -- logits, masked mean cross-entropy, the gradient of every parameter, and
temperature-scaled log-probs and entropies. Our TypeScript model must reproduce these.

Run from the repository root with the system Python (torch 1.13, CPU):
    /usr/bin/python3 packages/lm/scripts/make-qwen3-parity-fixture.py

Before writing, it checks itself: the float32 results against a float64 copy of the model (the
noise floor of the fixture), and each packed document against the same document run alone (the
mask and the restarting positions are right). The safetensors file is written by hand (struct +
json) in the reference implementation's layout, then read back and compared.
"""

import json
import math
import os
import struct
import sys
import tempfile

import numpy as np
import torch

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "qwen3-tiny-parity.safetensors")
GENERATOR = "packages/lm/scripts/make-qwen3-parity-fixture.py"

CONFIG = {
    "model_type": "qwen3",
    "hidden_act": "silu",
    "vocab_size": 96,
    "hidden_size": 48,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,  # 4 x 16 = 64 != hidden_size: q_proj and o_proj are not square
    "intermediate_size": 80,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1e6,
    "tie_word_embeddings": True,
}
TEMPERATURE = 0.7
SEQ_LEN = 12
DOCUMENT_LENGTHS = [[12], [5, 4, 3]]  # row 0: one document; row 1: three packed documents
LINEAR_STD, EMBEDDING_STD, NORM_STD = 0.08, 0.1, 0.1

# The float32 results must sit this close to float64 (max |f32 - f64| / max |f64| per tensor), or the
# fixture is too noisy to test against.
NOISE_LIMIT = 1e-5


# ----------------------------------------------------------------------------- model


def parameter_shapes(c):
    """Parameters in Hugging Face Qwen3 names, in the order they are drawn from the RNG."""
    d, hd, h, kv, inter = c["hidden_size"], c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
    shapes = [("model.embed_tokens.weight", (c["vocab_size"], d))]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes += [
            (p + "input_layernorm.weight", (d,)),
            (p + "self_attn.q_proj.weight", (h * hd, d)),
            (p + "self_attn.k_proj.weight", (kv * hd, d)),
            (p + "self_attn.v_proj.weight", (kv * hd, d)),
            (p + "self_attn.o_proj.weight", (d, h * hd)),
            (p + "self_attn.q_norm.weight", (hd,)),
            (p + "self_attn.k_norm.weight", (hd,)),
            (p + "post_attention_layernorm.weight", (d,)),
            (p + "mlp.gate_proj.weight", (inter, d)),
            (p + "mlp.up_proj.weight", (inter, d)),
            (p + "mlp.down_proj.weight", (d, inter)),
        ]
    shapes.append(("model.norm.weight", (d,)))
    return shapes


def init_parameters(c):
    params = {}
    for name, shape in parameter_shapes(c):
        if name.endswith("norm.weight"):
            # Not all ones, so that the gradients of the norm weights are not trivially related.
            params[name] = 1.0 + NORM_STD * torch.randn(shape)
        elif name == "model.embed_tokens.weight":
            params[name] = EMBEDDING_STD * torch.randn(shape)
        else:
            params[name] = LINEAR_STD * torch.randn(shape)
    return params


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, positions, theta):
    """x: [B, T, heads, d]; positions: [B, T]. Rotates the two halves of the head dimension."""
    d = x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=x.dtype) / d)
    freqs = positions[..., None].to(x.dtype) * inv_freq  # [B, T, d/2]
    cos = freqs.cos().repeat(1, 1, 2)[:, :, None, :]  # [B, T, 1, d], shared by all heads
    sin = freqs.sin().repeat(1, 1, 2)[:, :, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def attention_mask(segment_ids):
    """[B, 1, T, T] bool: query t sees key s iff s <= t and both are in the same document."""
    t = segment_ids.shape[1]
    causal = torch.arange(t)[None, :] <= torch.arange(t)[:, None]  # [query, key]
    same_document = segment_ids[:, :, None] == segment_ids[:, None, :]
    return (causal[None] & same_document)[:, None]


def decoder_block(x, p, prefix, positions, mask, c):
    b, t, _ = x.shape
    h, kv, hd, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    w = lambda name: p[prefix + name]  # noqa: E731

    y = rms_norm(x, w("input_layernorm.weight"), eps)
    q = rms_norm((y @ w("self_attn.q_proj.weight").T).view(b, t, h, hd), w("self_attn.q_norm.weight"), eps)
    k = rms_norm((y @ w("self_attn.k_proj.weight").T).view(b, t, kv, hd), w("self_attn.k_norm.weight"), eps)
    v = (y @ w("self_attn.v_proj.weight").T).view(b, t, kv, hd)
    q, k = rope(q, positions, c["rope_theta"]), rope(k, positions, c["rope_theta"])
    k, v = k.repeat_interleave(h // kv, dim=2), v.repeat_interleave(h // kv, dim=2)  # GQA
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B, heads, T, hd]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
    probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    attended = (probs @ v).transpose(1, 2).reshape(b, t, h * hd)
    x = x + attended @ w("self_attn.o_proj.weight").T

    y = rms_norm(x, w("post_attention_layernorm.weight"), eps)
    gated = torch.nn.functional.silu(y @ w("mlp.gate_proj.weight").T) * (y @ w("mlp.up_proj.weight").T)
    return x + gated @ w("mlp.down_proj.weight").T


def forward(p, input_ids, positions, segment_ids, c):
    mask = attention_mask(segment_ids)
    embed = p["model.embed_tokens.weight"]
    x = embed[input_ids.long()]
    for i in range(c["num_hidden_layers"]):
        x = decoder_block(x, p, f"model.layers.{i}.", positions, mask, c)
    return rms_norm(x, p["model.norm.weight"], c["rms_norm_eps"]) @ embed.T  # tied embeddings


def masked_mean_cross_entropy(logits, targets, loss_mask):
    token_loss = torch.logsumexp(logits, dim=-1) - logits.gather(-1, targets.long()[..., None])[..., 0]
    return (loss_mask * token_loss).sum() / loss_mask.sum()


def temperature_stats(logits, targets, temperature):
    logp = torch.log_softmax(logits / temperature, dim=-1)
    logprobs = logp.gather(-1, targets.long()[..., None])[..., 0]
    entropy = -(logp.exp() * logp).sum(-1)
    return logprobs, entropy


def evaluate(params, inputs, c, dtype):
    """Logits, loss, per-parameter gradients and temperature stats with the model cast to `dtype`."""
    p = {name: w.detach().to(dtype).requires_grad_(True) for name, w in params.items()}
    logits = forward(p, inputs["input_ids"], inputs["position_ids"], inputs["segment_ids"], c)
    loss = masked_mean_cross_entropy(logits, inputs["target_ids"], inputs["loss_mask"].to(dtype))
    grads = torch.autograd.grad(loss, list(p.values()))
    # The stats are a function of the logits, evaluated in float64 whatever the model's dtype: at this
    # model's peaked distributions a float32 entropy would lose up to ~1% of its (tiny) value.
    with torch.no_grad():
        logprobs, entropy = temperature_stats(logits.detach().double(), inputs["target_ids"], TEMPERATURE)
    return {
        "logits": logits.detach(),
        "loss": loss.detach().reshape(1),
        "grads": {name: g for name, g in zip(p.keys(), grads)},
        "logprobs_t07": logprobs,
        "entropy_t07": entropy,
    }


# ----------------------------------------------------------------------------- inputs


def make_inputs(c):
    positions, segments = [], []
    for lengths in DOCUMENT_LENGTHS:
        assert sum(lengths) == SEQ_LEN
        positions.append([p for n in lengths for p in range(n)])  # restart at 0 in each document
        segments.append([s for s, n in enumerate(lengths) for _ in range(n)])
    batch = len(DOCUMENT_LENGTHS)
    input_ids = torch.randint(0, c["vocab_size"], (batch, SEQ_LEN), dtype=torch.int32)
    target_ids = torch.randint(0, c["vocab_size"], (batch, SEQ_LEN), dtype=torch.int32)
    loss_mask = torch.ones(batch, SEQ_LEN, dtype=torch.float32)
    for row, lengths in enumerate(DOCUMENT_LENGTHS):
        starts = [sum(lengths[:i]) for i in range(len(lengths))]
        loss_mask[row, starts] = 0.0  # the first token of every document
    loss_mask[0, 7] = 0.0  # and one in the middle of a document
    return {
        "input_ids": input_ids,
        "target_ids": target_ids,
        "position_ids": torch.tensor(positions, dtype=torch.int32),
        "segment_ids": torch.tensor(segments, dtype=torch.int32),
        "loss_mask": loss_mask,
    }


# ----------------------------------------------------------------------------- checks


def relative_error(approx, exact):
    """max |approx - exact| / max |exact|: the error relative to the tensor's scale."""
    exact = exact.double()
    return ((approx.double() - exact).abs().max() / exact.abs().max()).item()


def check_noise_floor(f32, f64):
    errors = {
        "logits": relative_error(f32["logits"], f64["logits"]),
        "loss": relative_error(f32["loss"], f64["loss"]),
        "grads (worst parameter)": max(relative_error(f32["grads"][n], f64["grads"][n]) for n in f32["grads"]),
        "logprobs_t07": relative_error(f32["logprobs_t07"], f64["logprobs_t07"]),
        "entropy_t07": relative_error(f32["entropy_t07"], f64["entropy_t07"]),
    }
    print("float32 vs float64, max |f32 - f64| / max |f64|:")
    for what, error in errors.items():
        print(f"  {what:<24} {error:.2e}")
    worst_grad = max(f32["grads"], key=lambda n: relative_error(f32["grads"][n], f64["grads"][n]))
    print(f"  (worst gradient: {worst_grad})")
    for what, error in errors.items():
        if not error < NOISE_LIMIT:
            sys.exit(f"{GENERATOR}: float32 {what} differs from float64 by {error:.2e} (limit {NOISE_LIMIT:.0e})")


def check_packed_documents(params, inputs, c):
    """Each packed document must give the logits it gives alone; a wrong mask or positions must not."""
    for dtype, tolerance in [(torch.float64, 1e-12), (torch.float32, 1e-5)]:
        p = {name: w.to(dtype) for name, w in params.items()}
        with torch.no_grad():
            batched = forward(p, inputs["input_ids"], inputs["position_ids"], inputs["segment_ids"], c)
            worst = 0.0
            for row, lengths in enumerate(DOCUMENT_LENGTHS):
                start = 0
                for n in lengths:
                    alone = forward(
                        p,
                        inputs["input_ids"][row : row + 1, start : start + n],
                        torch.arange(n, dtype=torch.int32)[None],
                        torch.zeros(1, n, dtype=torch.int32),
                        c,
                    )
                    worst = max(worst, relative_error(batched[row : row + 1, start : start + n], alone))
                    start += n
            print(f"packed documents vs each document alone ({dtype}): max relative difference {worst:.2e}")
            if not worst <= tolerance:
                sys.exit(f"{GENERATOR}: packed documents differ from documents run alone by {worst:.2e}")

            # The check has teeth: without the document mask, the later documents' logits change.
            # (Not restarting the positions would change nothing beyond rounding: RoPE scores depend
            # only on position differences, and those are the same within a document either way.)
            one_segment = torch.zeros(1, SEQ_LEN, dtype=torch.int32)
            no_mask = forward(p, inputs["input_ids"][1:2], inputs["position_ids"][1:2], one_segment, c)
            difference = relative_error(no_mask[:, 5:], batched[1:2, 5:])
            if not difference > 1e-3:
                sys.exit(f"{GENERATOR}: packed logits without the document mask barely change ({difference:.2e})")


# ----------------------------------------------------------------------------- safetensors


# The reference implementation's dtype order (increasing alignment); tensors are written in decreasing order.
DTYPE_RANK = {"I32": 10, "F32": 12}
NUMPY_DTYPE = {"I32": "<i4", "F32": "<f4"}
TORCH_TO_SAFETENSORS = {torch.int32: "I32", torch.float32: "F32"}


def serialize_safetensors(tensors, metadata):
    """Bytes in the reference layout: 8-byte LE header length, compact JSON padded with spaces to a
    multiple of 8, tensors ordered by descending dtype alignment then name."""
    entries = []
    for name, tensor in tensors.items():
        dtype = TORCH_TO_SAFETENSORS[tensor.dtype]
        entries.append((name, dtype, list(tensor.shape), tensor.contiguous().numpy().astype(NUMPY_DTYPE[dtype]).tobytes()))
    entries.sort(key=lambda e: (-DTYPE_RANK[e[1]], e[0].encode("utf-8")))
    header = {"__metadata__": dict(sorted(metadata.items()))}
    offset = 0
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header_bytes = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    return struct.pack("<Q", len(header_bytes)) + header_bytes + b"".join(e[3] for e in entries)


def parse_safetensors(data):
    (header_length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_length].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    base = 8 + header_length
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[base + begin : base + end], dtype=NUMPY_DTYPE[info["dtype"]]).reshape(info["shape"])
        tensors[name] = torch.from_numpy(array.copy())
    return tensors, metadata


def write_atomically(path, data):
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".qwen3-tiny-parity.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it private
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


# ----------------------------------------------------------------------------- main


def main():
    torch.manual_seed(0)
    c = CONFIG
    params = init_parameters(c)
    inputs = make_inputs(c)

    f32 = evaluate(params, inputs, c, torch.float32)
    f64 = evaluate(params, inputs, c, torch.float64)
    check_noise_floor(f32, f64)
    check_packed_documents(params, inputs, c)

    tensors = {**inputs, **params}
    tensors["logits"] = f32["logits"]
    tensors["loss"] = f32["loss"]
    tensors["logprobs_t07"] = f32["logprobs_t07"].float()
    tensors["entropy_t07"] = f32["entropy_t07"].float()
    for name, grad in f32["grads"].items():
        tensors["grad." + name] = grad
    metadata = {
        "config": json.dumps(c, sort_keys=True),
        "temperature": str(TEMPERATURE),
        "generator": GENERATOR,
        "torch": torch.__version__,
    }
    data = serialize_safetensors(tensors, metadata)

    read_back, read_metadata = parse_safetensors(data)
    assert read_metadata == metadata, "metadata did not survive the round trip"
    assert read_back.keys() == tensors.keys(), "tensor names did not survive the round trip"
    for name, tensor in tensors.items():
        assert torch.equal(read_back[name], tensor.detach()), f"{name} did not survive the round trip"

    write_atomically(os.path.normpath(OUTPUT), data)
    print(f"loss {f32['loss'].item():.6f}; wrote {len(tensors)} tensors, {len(data)} bytes to {os.path.relpath(os.path.normpath(OUTPUT))}")


if __name__ == "__main__":
    main()
