"""`lumen quantize` as a user runs it, with its output read by another implementation: PyPI's
`gguf` package parses every file, keeps every metadata field, and its `gguf.quants.dequantize`
agrees with Lumen's own dequantization (written out by `lumen quantize OUT BACK F32`)."""
import hashlib
import os
import shutil
import subprocess

import numpy as np
import pytest
from gguf import GGUFReader
from gguf.quants import dequantize

from conftest import lumen_bin
from gguf_header import read_header


def shared_model(name):
    shared = os.environ.get("LUMEN_TEST_DATA")
    path = os.path.join(shared or "", "models", name)
    if not shared or not os.path.exists(path):
        pytest.fail(f"LUMEN_TEST_DATA must name the shared folder with models/{name} (make test sets it)")
    return path


def quantize(source, destination, kind):
    return subprocess.run([lumen_bin(), "quantize", str(source), str(destination), kind], capture_output=True, text=True, check=True)


def fields(reader):
    return {name: field.contents() for name, field in reader.fields.items() if not name.startswith("GGUF.")}


@pytest.mark.parametrize("kind", ["F16", "Q8_0", "Q4_0", "Q2_K", "Q3_K", "Q4_K", "Q6_K", "Q3_K_M", "Q4_K_M", "Q5_K_S", "Q5_K_M"])
def test_output_is_valid_gguf_with_the_source_metadata(tmp_path, kind):
    source = shared_model("quant-test-f32.gguf")
    result = quantize(source, tmp_path / "out.gguf", kind)
    assert f"{tmp_path / 'out.gguf'}: 13.65 MB →" in result.stdout and "smaller" in result.stdout
    assert "39/39 output.weight" in result.stderr
    # The progress bar of cells in the terminal, one line per tenth in a log.
    assert "█" * 20 + " 100%" in result.stderr and result.stderr.count("\n") <= 12
    original, converted = GGUFReader(source), GGUFReader(tmp_path / "out.gguf")
    expected = fields(original)
    expected.pop("general.file_type", None)
    got = fields(converted)
    assert got.pop("general.file_type") == {"F16": 1, "Q8_0": 7, "Q4_0": 2, "Q2_K": 10, "Q3_K": 11, "Q4_K": 14, "Q6_K": 18,
                                            "Q3_K_M": 12, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17}[kind]
    got.pop("general.quantization_version", None)
    assert got == expected
    assert [(t.name, list(t.shape)) for t in converted.tensors] == [(t.name, list(t.shape)) for t in original.tensors]
    assert sorted(os.listdir(tmp_path)) == ["out.gguf"]


@pytest.mark.parametrize("model, kind, expected_type", [
    ("stories260K.gguf", "Q4_K_M", "Q5_0"),     # 64-wide rows: Q4_K falls back to Q5_0
    ("quant-test-f32.gguf", "Q5_K_M", "Q5_K"),
    ("quant-test-f32.gguf", "Q4_K_M", "Q4_K"),
    ("quant-test-f32.gguf", "Q6_K", "Q6_K"),
    ("quant-test-f32.gguf", "Q2_K", "Q2_K"),
    ("quant-test-f32.gguf", "Q3_K_M", "Q3_K"),
])
def test_dequantization_agrees_with_the_gguf_package(tmp_path, model, kind, expected_type):
    quantized, widened = tmp_path / "q.gguf", tmp_path / "f32.gguf"
    quantize(shared_model(model), quantized, kind)
    quantize(quantized, widened, "F32")
    ours = {t.name: np.array(t.data, dtype=np.float32).reshape(-1) for t in GGUFReader(widened).tensors}
    checked = 0
    for tensor in GGUFReader(quantized).tensors:
        theirs = dequantize(tensor.data, tensor.tensor_type).reshape(-1)
        assert np.allclose(ours[tensor.name], theirs, rtol=1e-6, atol=1e-7), tensor.name
        checked += tensor.tensor_type.name == expected_type
    assert checked > 0


def test_unknown_type_is_refused_with_the_choices(tmp_path):
    result = subprocess.run([lumen_bin(), "quantize", shared_model("stories260K.gguf"), str(tmp_path / "x.gguf"), "IQ2_XXS"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown type IQ2_XXS" in result.stderr and "Q4_K_M" in result.stderr
    assert not os.listdir(tmp_path)


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_writing_onto_the_input_itself_is_refused_and_the_model_is_unchanged(tmp_path):
    model = tmp_path / "model.gguf"
    shutil.copy(shared_model("quant-test-f32.gguf"), model)
    before = sha256(model)
    os.symlink(model, tmp_path / "soft.gguf")
    os.link(model, tmp_path / "hard.gguf")
    for output in [model, tmp_path / "." / "model.gguf", tmp_path / "soft.gguf", tmp_path / "hard.gguf"]:
        result = subprocess.run([lumen_bin(), "quantize", str(model), str(output), "Q8_0"], capture_output=True, text=True)
        assert result.returncode != 0
        assert "is the input model itself" in result.stderr and "--in-place" in result.stderr
        assert "lumen quantize" in result.stderr  # the subcommand's usage, not the top level's
    assert sha256(model) == before
    assert sorted(os.listdir(tmp_path)) == ["hard.gguf", "model.gguf", "soft.gguf"]


def test_in_place_replaces_the_model_through_a_temporary_file(tmp_path):
    model = tmp_path / "model.gguf"
    shutil.copy(shared_model("quant-test-f32.gguf"), model)
    os.symlink(model, tmp_path / "soft.gguf")
    subprocess.run([lumen_bin(), "quantize", "--in-place", str(model), str(tmp_path / "soft.gguf"), "Q8_0"],
                   capture_output=True, text=True, check=True)
    assert os.path.islink(tmp_path / "soft.gguf")  # written through the link, as cp would
    assert {t.tensor_type.name for t in GGUFReader(model).tensors} == {"F32", "Q8_0"}
    assert sorted(os.listdir(tmp_path)) == ["model.gguf", "soft.gguf"]


def test_an_output_directory_that_does_not_exist_is_named(tmp_path):
    result = subprocess.run([lumen_bin(), "quantize", shared_model("stories260K.gguf"), str(tmp_path / "missing" / "x.gguf"), "Q8_0"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert f"directory {tmp_path / 'missing'} does not exist" in result.stderr and ".partial" not in result.stderr


@pytest.mark.parametrize("kind", ["Q5_1", "Q2_K", "Q3_K", "IQ4_NL", "IQ4_XS", "Q4_1", "MXFP4"])
def test_lumen_reads_every_loadable_format_as_the_gguf_package_does(tmp_path, kind):
    """A file with random blocks of the format (small, finite scales), widened to F32 by Lumen
    (`lumen quantize IN OUT F32`) and by `gguf.quants.dequantize`: the weights must agree."""
    import gguf
    quant_type = gguf.GGMLQuantizationType[kind]
    block_size, block_bytes = gguf.GGML_QUANT_SIZES[quant_type]
    rows, columns = 4, 512
    generator = np.random.default_rng(7)
    blocks = generator.integers(0, 256, size=(rows * columns // block_size, block_bytes), dtype=np.uint8)
    # The F16 scale fields of each layout, set to small random values so no weight overflows.
    scale_offsets = {"Q5_1": [0, 2], "Q4_1": [0, 2], "Q2_K": [80, 82], "Q3_K": [108], "IQ4_NL": [0], "IQ4_XS": [0], "MXFP4": []}[kind]
    for offset in scale_offsets:
        blocks[:, offset:offset + 2] = (generator.random(len(blocks)) * 0.02).astype(np.float16).view(np.uint8).reshape(-1, 2)
    if kind == "MXFP4":
        # Its one-byte power-of-two scale: exponents 2^-10 … 2^0, the subnormal ones (0 and 1) too.
        blocks[:, 0] = generator.integers(117, 128, size=len(blocks))
        blocks[:2, 0] = [0, 1]
    source = tmp_path / "in.gguf"
    writer = gguf.GGUFWriter(str(source), "llama")
    writer.add_tensor("blk.0.ffn_down.weight", blocks.reshape(rows, columns // block_size * block_bytes), raw_dtype=quant_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    quantize(source, tmp_path / "out.gguf", "F32")
    ours = GGUFReader(str(tmp_path / "out.gguf")).tensors[0].data.reshape(-1)
    theirs = dequantize(GGUFReader(str(source)).tensors[0].data, quant_type).reshape(-1)
    assert np.allclose(ours, theirs, rtol=1e-6, atol=1e-6), np.abs(ours - theirs).max()


@pytest.mark.parametrize("kind", ["Q4_1", "Q5_1"])
def test_quantizer_writes_what_the_gguf_package_writes(tmp_path, kind):
    """Q4_1 and Q5_1 from `lumen quantize` are byte for byte the blocks of `gguf.quants.quantize`
    (the reference quantizers, as in ggml) for every matrix."""
    import gguf
    source = shared_model("quant-test-f32.gguf")
    quantize(source, tmp_path / "out.gguf", kind)
    originals = {tensor.name: tensor for tensor in GGUFReader(source).tensors}
    checked = 0
    for tensor in GGUFReader(str(tmp_path / "out.gguf")).tensors:
        if tensor.tensor_type != gguf.GGMLQuantizationType[kind]:
            continue
        expected = gguf.quants.quantize(np.asarray(originals[tensor.name].data, dtype=np.float32), tensor.tensor_type)
        assert np.array_equal(np.asarray(tensor.data).reshape(-1), expected.reshape(-1)), tensor.name
        checked += 1
    assert checked >= 20


def test_widening_to_f32_reports_the_file_as_larger(tmp_path):
    result = quantize(shared_model("quant-test-q8_0.gguf"), tmp_path / "wide.gguf", "F32")
    source, wide = os.path.getsize(shared_model("quant-test-q8_0.gguf")), os.path.getsize(tmp_path / "wide.gguf")
    assert f"({wide / source:.2f}× larger)" in result.stdout, result.stdout


def test_mxfp4_moe_writes_experts_as_mxfp4_and_the_rest_as_q8_0_as_llama_cpp(tmp_path):
    """MXFP4_MOE (llama.cpp's gpt-oss format): the three-dimensional expert tensors MXFP4, byte for
    byte `gguf.quants.quantize`'s blocks (ggml's reference quantizer), every other matrix and the
    output Q8_0, the router and vectors F32."""
    import gguf
    generator = np.random.default_rng(11)
    source = tmp_path / "moe.gguf"
    writer = gguf.GGUFWriter(str(source), "qwen3moe")
    tensors = {
        "token_embd.weight": (96, 64), "output.weight": (96, 64), "blk.0.attn_q.weight": (64, 64),
        "blk.0.ffn_gate_inp.weight": (4, 64), "blk.0.ffn_gate_exps.weight": (4, 32, 64),
        "blk.0.ffn_up_exps.weight": (4, 32, 64), "blk.0.ffn_down_exps.weight": (4, 64, 32), "blk.0.attn_norm.weight": (64,),
    }
    for name, shape in tensors.items():
        values = generator.standard_normal(shape).astype(np.float32)
        # Outliers and an all-zero row, which the scale search must handle as ggml does.
        values.reshape(-1)[::97] *= 40
        if len(shape) == 3:
            values[0, 0] = 0
        writer.add_tensor(name, values)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    quantize(source, tmp_path / "out.gguf", "MXFP4_MOE")
    originals = {tensor.name: np.asarray(tensor.data, dtype=np.float32) for tensor in GGUFReader(str(source)).tensors}
    written = {tensor.name: tensor for tensor in GGUFReader(str(tmp_path / "out.gguf")).tensors}
    types = {name: tensor.tensor_type.name for name, tensor in written.items()}
    assert types == {"token_embd.weight": "Q8_0", "output.weight": "Q8_0", "blk.0.attn_q.weight": "Q8_0",
                     "blk.0.ffn_gate_inp.weight": "F32", "blk.0.ffn_gate_exps.weight": "MXFP4",
                     "blk.0.ffn_up_exps.weight": "MXFP4", "blk.0.ffn_down_exps.weight": "MXFP4", "blk.0.attn_norm.weight": "F32"}
    for name in ("blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight"):
        expected = gguf.quants.quantize(originals[name], gguf.GGMLQuantizationType.MXFP4)
        assert np.array_equal(np.asarray(written[name].data).reshape(-1), expected.reshape(-1)), name
    assert GGUFReader(str(tmp_path / "out.gguf")).fields["general.file_type"].contents() == 38


ARCHITECTURE_REFERENCES = os.path.join(os.path.dirname(__file__), "..", "reference", "archs")


@pytest.mark.parametrize("kind", ["Q3_K_M", "Q4_K_M", "Q5_K_M"])
def test_mixes_give_each_tensor_llama_quantizes_type_in_every_architecture(tmp_path, kind):
    """The K-quant mixes on llama.cpp's own test model of every architecture Lumen runs
    (make arch-models) and the synthetic Gemma 4 models (which test-llama-archs does not write),
    tensor by tensor against `llama-quantize` (built beside llama-server): value-like matrices
    counted among themselves (a hybrid's fused `attn_qkv` and LFM2's attention layers), the shared
    expert's down matrix as a down matrix, convolutions and Gemma 4's per-layer embedding product
    kept F32, an eight-expert model's keys, values and attention output given more bits."""
    import json
    binary = os.path.join(os.path.dirname(os.environ.get("LLAMA_SERVER", "")), "llama-quantize")
    if not os.path.exists(binary):
        pytest.fail("llama-quantize is missing beside LLAMA_SERVER (make llama-server builds both)")
    folder = os.environ.get("LUMEN_ARCH_MODELS", ".build/arch-models")
    models = sorted({json.load(open(os.path.join(ARCHITECTURE_REFERENCES, name)))["model"]
                     for name in os.listdir(ARCHITECTURE_REFERENCES) if name.endswith(".json")})
    synthetic = os.environ.get("LUMEN_SYNTHETIC_MODELS", ".build/synthetic-models")
    sources = [os.path.join(folder, model) for model in models] + [os.path.join(synthetic, f"{name}.gguf") for name in ("gemma4", "gemma4moe")]
    for source in sources:
        model = os.path.basename(source)
        subprocess.run([binary, source, str(tmp_path / "llama.gguf"), kind, "2"], capture_output=True, check=True)
        quantize(source, tmp_path / "lumen.gguf", kind)
        # The header alone: the gguf package's reader takes half a minute over Gemma 4's vocabulary.
        expected, written = read_header(tmp_path / "llama.gguf")[1], read_header(tmp_path / "lumen.gguf")[1]
        assert written == expected, (model, {name: (expected.get(name), written.get(name)) for name in expected if written.get(name) != expected[name]})
