#!/usr/bin/env python3
"""Writes the sparse-autoencoder references of Tests/reference/sae/.

Small random SAEs over SmolLM2's residual stream, in SAELens' format (a folder with cfg.json and
sae_weights.safetensors; standard F32, JumpReLU BF16, TopK F16) and Gemma Scope 2's
(resid_post/layer_N_.../params.safetensors, F32), and what a NumPy implementation of SAELens'
formulas gives for llama.cpp's own activations (the residual stream after each block, from
`<shared>/reference/inside/smollm2-acts.l_out.bin`):

    sae_in = x - b_dec * apply_b_dec_to_input      (Gemma Scope: x as it is)
    pre    = sae_in @ W_enc + b_enc
    f      = relu(pre)                (standard)
           = relu(pre) * (pre > threshold)     (jumprelu)
           = relu of the k largest of pre, 0 elsewhere   (topk)
    x_hat  = f @ W_dec + b_dec

`expected.npz` holds, per SAE, the features and reconstructions computed in float64 from the
stored weights; `references.json` the oracle's own spread at each position: the largest difference between
NumPy's float32 computation and that float64 one, which the Swift tests' tolerance is a multiple
of. The
seeds (and JumpReLU thresholds, each halfway between two of its feature's pre-activations) are
chosen so that no pre-activation is near a threshold or a tie at the k-th largest (TopK) within
1000 times its position's spread, so a float32 implementation cannot flip a feature.

The JumpReLU SAE has a planted feature: feature 0's encoder column is the direction from the mean
activation of the positions between the first and the last to the last one's (the first one's,
BOS's, component removed), its bias halfway between the last position's projection and the
others', so it fires at the last position only.

Usage: make_sae_references.py SHARED_DIR OUT_DIR   (needs numpy and safetensors)
"""
import json
import pathlib
import struct
import sys

import numpy as np
from safetensors import safe_open

D_SAE = 32


def bf16_round(values):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def write_safetensors(path, tensors, dtype):
    """Writes `tensors` (name -> float32 array) as safetensors of `dtype` (F32, F16, BF16); returns
    the values as stored, as float32."""
    stored, blobs, header, offset = {}, [], {}, 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array, dtype=np.float32)
        if dtype == "F32":
            data, back = array.tobytes(), array
        elif dtype == "F16":
            half = array.astype("<f2")
            data, back = half.tobytes(), half.astype(np.float32)
        else:
            back = bf16_round(array)
            data = (back.view(np.uint32) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
        stored[name] = back
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    # The safetensors package reads back what it can (NumPy has no bfloat16).
    if dtype != "BF16":
        with safe_open(str(path), framework="numpy") as f:
            for name in tensors:
                assert np.array_equal(f.get_tensor(name).astype(np.float32), stored[name]), name
    return stored


def encode(x, w, arch, k, subtract, dtype):
    sae_in = x.astype(dtype) - (w["b_dec"].astype(dtype) if subtract else 0)
    pre = sae_in @ w["W_enc"].astype(dtype) + w["b_enc"].astype(dtype)
    if arch == "standard":
        f = np.maximum(pre, 0)
    elif arch == "jumprelu":
        f = np.maximum(pre, 0) * (pre > w["threshold"].astype(dtype))
    else:
        f = np.zeros_like(pre)
        order = np.argsort(-pre, axis=-1, kind="stable")[:, :k]
        rows = np.arange(pre.shape[0])[:, None]
        f[rows, order] = np.maximum(pre[rows, order], 0)
    return pre, f


def decode(f, w, dtype):
    return f.astype(dtype) @ w["W_dec"].astype(dtype) + w["b_dec"].astype(dtype)


def make(x, arch, k, subtract, seed, planted=False):
    """Random weights, seed after seed; a JumpReLU SAE's thresholds each halfway between two of
    its feature's pre-activations, so none is near one."""
    d_in = x.shape[1]
    for attempt in range(1000):
        rng = np.random.default_rng(seed + attempt)
        scale = 1 / (np.sqrt(d_in) * np.abs(x).mean())
        w = {
            "W_enc": (rng.standard_normal((d_in, D_SAE)) * scale).astype(np.float32),
            "b_enc": (rng.standard_normal(D_SAE) * 0.1).astype(np.float32),
            "W_dec": (rng.standard_normal((D_SAE, d_in)) / np.sqrt(D_SAE) * np.abs(x).mean()).astype(np.float32),
            "b_dec": (rng.standard_normal(d_in) * 0.1 * np.abs(x).mean()).astype(np.float32),
        }
        if planted:
            # From the mean of the positions between the first and the last to the last, with the
            # first position's (BOS's, of a far larger norm) component taken out.
            direction = x[-1] - x[1:-1].mean(axis=0)
            first = x[0] / np.linalg.norm(x[0])
            direction -= direction @ first * first
            direction /= np.linalg.norm(direction)
            w["W_enc"][:, 0] = direction
            projections = (x - (w["b_dec"] if subtract else 0)) @ direction
            w["b_enc"][0] = -(projections[-1] + projections[:-1].max()) / 2
        if arch == "jumprelu":
            pre = (x - (w["b_dec"] if subtract else 0)) @ w["W_enc"] + w["b_enc"]
            ordered = np.sort(pre, axis=0)
            gaps = rng.integers(0, len(x) - 1, D_SAE)
            w["threshold"] = np.abs((ordered[gaps, np.arange(D_SAE)] + ordered[gaps + 1, np.arange(D_SAE)]) / 2).astype(np.float32)
            if planted:
                w["threshold"][0] = (projections[-1] - projections[:-1].max()) / 4
        yield w


def main():
    shared, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    meta = json.loads((shared / "reference/inside/smollm2-acts.json").read_text())
    n_layer, n_embd, tokens = meta["n_layer"], meta["n_embd"], len(meta["tokens"])
    l_out = np.fromfile(shared / "reference/inside/smollm2-acts.l_out.bin", dtype=np.float32).reshape(n_layer, tokens, n_embd)
    saes = [
        # name, path of the weights file, format, architecture, k, dtype, block, subtract b_dec, planted
        ("standard", "saelens-standard-f32/sae_weights.safetensors", "saelens", "standard", None, "F32", 6, True, False),
        ("jumprelu", "saelens-jumprelu-bf16/sae_weights.safetensors", "saelens", "jumprelu", None, "BF16", 12, False, True),
        ("topk", "saelens-topk-f16/sae_weights.safetensors", "saelens", "topk", 6, "F16", 20, True, False),
        ("gemmascope", "gemmascope/resid_post/layer_3_width_16k_l0_small/params.safetensors", "gemmascope", "jumprelu", None, "F32", 3, False, False),
    ]
    expected, summary = {}, {"source": "smollm2-acts.l_out.bin", "d_sae": D_SAE, "saes": []}
    for index, (name, file, form, arch, k, dtype, block, subtract, planted) in enumerate(saes):
        x = l_out[block]
        for weights in make(x, arch, k, subtract, seed=100 * index, planted=planted):
            # The weights as stored decide the result.
            stored = {key: bf16_round(v) if dtype == "BF16" else v.astype("<f2").astype(np.float32) if dtype == "F16" else v for key, v in weights.items()}
            pre64, f64 = encode(x, stored, arch, k, subtract, np.float64)
            pre32, f32 = encode(x, stored, arch, k, subtract, np.float32)
            # Each position's own spread: the first (BOS) has activations a thousand times larger.
            pre_spread = np.abs(pre32 - pre64).max(axis=1)
            if arch == "jumprelu":
                margin = (np.abs(pre64 - stored["threshold"]).min(axis=1) / pre_spread).min()
            elif arch == "topk":
                ordered = -np.sort(-pre64, axis=-1)
                margin = ((ordered[:, k - 1] - ordered[:, k]) / pre_spread).min()
            else:
                margin = np.inf
            fired = (f64 > 0).sum(axis=1)
            if margin > 1000 and fired.min() > 0 and (not planted or (f64[:, 0] > 0).tolist() == [False] * (tokens - 1) + [True]):
                break
        else:
            raise SystemExit(f"no seed keeps {name} away from its thresholds")
        tensors = dict(weights)
        if form == "gemmascope":
            tensors = {key.lower(): value for key, value in tensors.items()}
        write_safetensors(out / file, tensors, dtype)
        if form == "saelens":
            cfg = {"architecture": arch, "d_in": n_embd, "d_sae": D_SAE, "dtype": "float32", "model_name": "SmolLM2-135M-Instruct",
                   "hook_name": f"blocks.{block}.hook_resid_post", "hook_head_index": None, "apply_b_dec_to_input": subtract,
                   "normalize_activations": "none", "reshape_activations": "none", "device": "cpu"}
            if k:
                cfg["k"] = k
            (out / file).parent.joinpath("cfg.json").write_text(json.dumps(cfg, indent=2) + "\n")
        recon64, recon32 = decode(f64, stored, np.float64), decode(f32, stored, np.float32)
        expected[f"{name}.features"] = f64.astype(np.float32)
        expected[f"{name}.reconstruction"] = recon64.astype(np.float32)
        summary["saes"].append({
            "name": name, "path": str(pathlib.Path(file).parent if form == "saelens" else file), "architecture": arch, "k": k, "dtype": dtype,
            "block": block, "planted_feature": 0 if planted else None,
            "spread_features": np.abs(f32 - f64).max(axis=1).tolist(), "spread_reconstruction": np.abs(recon32 - recon64).max(axis=1).tolist(),
            "threshold_margin_over_spread": None if margin == np.inf else float(margin),
            "features_fired_per_token": fired.tolist(),
        })
    np.savez(out / "expected.npz", **expected)
    (out / "references.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
