"""Scoring text: `lumen perplexity` and `lumen kld` against llama-perplexity's figures on the same
file and settings (Tests/reference/perplexity, made by scripts/make_perplexity_references.py), and
`compareModels`'s statistics against NumPy over the same models' logits, taken one token at a
time through `lumen generate --force-ids --dump-logits`."""
import json
import os
import pathlib
import re
import subprocess

import numpy
import pytest

from conftest import lumen_bin

SHARED = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", ""))
CACHE = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache" / "lumen" / "models"))
REFERENCE = pathlib.Path(__file__).resolve().parent.parent / "reference" / "perplexity"
REFERENCES = json.loads((REFERENCE / "llama-perplexity.json").read_text())
TEXT = REFERENCE / REFERENCES["text"]


def model_path(case):
    return (SHARED if case["root"] == "shared" else CACHE) / case["model"]


@pytest.mark.parametrize("case", REFERENCES["perplexity"], ids=lambda case: case["model"])
def test_perplexity_matches_llama_perplexity(case):
    result = subprocess.run([lumen_bin(), "perplexity", str(model_path(case)), str(TEXT), "--ctx", str(case["context"])],
                            capture_output=True, text=True, check=True, timeout=600)
    final = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", result.stdout)
    windows = [float(value) for value in re.findall(r"\[\d+\]([0-9.]+),", result.stdout)]
    assert len(windows) == len(case["windows"])
    # The bound: within 0.5 % of llama-perplexity's final estimate; the running values
    # after each window, over fewer tokens, within 1 %.
    assert abs(float(final.group(1)) / case["ppl"] - 1) <= 0.005, (final.group(0), case["ppl"])
    for ours, theirs in zip(windows, case["windows"]):
        assert abs(ours / theirs - 1) <= 0.01, (windows, case["windows"])
    assert abs(float(final.group(2)) / case["uncertainty"] - 1) <= 0.02


@pytest.mark.parametrize("case", REFERENCES["divergence"], ids=lambda case: case["other"])
def test_kld_matches_llama_perplexity(case):
    result = subprocess.run([lumen_bin(), "kld", str(SHARED / case["base"]), str(SHARED / case["other"]), str(TEXT),
                             "--ctx", str(case["context"])], capture_output=True, text=True, check=True, timeout=600)
    figure = lambda pattern: float(re.search(pattern + r"\s*:\s*(-?[0-9.]+)", result.stdout).group(1))
    # llama-perplexity keeps the base's log-probabilities as 16-bit levels over the top 16 nats, and
    # the two engines round differently in the quantized model: the means agree to a few percent.
    assert abs(figure(r"Mean    KLD") / case["mean_kld"] - 1) <= 0.05
    assert abs(figure(r"Same top p") - case["same_top_percent"]) <= 2.0
    assert abs(figure(r"Mean PPL\(Q\)  ") / case["mean_ppl_q"] - 1) <= 0.05


def forced_logits(model, ids, tmp_path):
    """The model's logits at every position of `ids` (which start with BOS), one token at a time."""
    dump = tmp_path / "logits.bin"
    subprocess.run([lumen_bin(), "generate", str(model), "", "--temp", "0", "-n", str(len(ids) - 1), "--json",
                    "--force-ids", ",".join(map(str, ids[1:])), "--dump-logits", str(dump)],
                   capture_output=True, text=True, check=True, timeout=300)
    return numpy.fromfile(dump, dtype="<f4").reshape(len(ids) - 1, -1).astype(numpy.float64)


def log_softmax(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))


def test_compare_models_statistics_equal_numpy(tmp_path):
    # Two F32 models over one vocabulary (TinyStories' 512 tokens): one-token and batched
    # evaluation then agree to rounding, so both sides see the same logits.
    base, other = SHARED / "models/stories260K.gguf", SHARED / "models/quant-test-f32.gguf"
    text = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
    ids = json.loads(subprocess.run([lumen_bin(), "tokenize", str(base), text, "--json"], capture_output=True, text=True, check=True).stdout)
    script = (f'let b = load("{base}")\nlet o = load("{other}")\nlet c = compareModels(b, o, "{text}")\n'
              'print(c.tokens)\nprint(c.meanKL)\nprint(c.medianKL)\nprint(c.p99KL)\nprint(c.maxKL)\nprint(c.sameTop)\n'
              'print(c.meanDeltaP)\nprint(c.rmsDeltaP)\nprint(c.perplexity)\nprint(c.basePerplexity)\nprint(c.kl)\n')
    result = subprocess.run([lumen_bin(), "repl"], input=script, capture_output=True, text=True, check=True, timeout=300)
    lines = result.stdout.strip().splitlines()[-11:]
    tokens, mean, median, p99, maximum, same_top, mean_dp, rms_dp, ppl, base_ppl = (float(line) for line in lines[:10])
    per_token = json.loads(lines[10])

    log_p, log_q = log_softmax(forced_logits(base, ids, tmp_path)), log_softmax(forced_logits(other, ids, tmp_path))
    targets = numpy.array(ids[1:])
    rows = numpy.arange(len(targets))
    kl = (numpy.exp(log_p) * (log_p - log_q)).sum(axis=1)
    dp = numpy.exp(log_q[rows, targets]) - numpy.exp(log_p[rows, targets])
    assert tokens == len(targets)
    close = lambda ours, theirs: abs(ours - theirs) <= 1e-3 * abs(theirs) + 1e-7
    assert all(close(a, b) for a, b in zip(per_token, kl)), (per_token, kl.tolist())
    assert close(mean, kl.mean()) and close(median, numpy.median(kl)) and close(maximum, kl.max())
    assert close(p99, numpy.percentile(kl, 99))
    assert same_top == numpy.mean(log_p.argmax(axis=1) == log_q.argmax(axis=1))
    assert close(mean_dp, dp.mean()) and close(rms_dp, numpy.sqrt((dp ** 2).mean()))
    assert close(ppl, numpy.exp(-log_q[rows, targets].mean())) and close(base_ppl, numpy.exp(-log_p[rows, targets].mean()))


def test_kld_refuses_models_that_tokenize_differently():
    result = subprocess.run([lumen_bin(), "kld", str(SHARED / "models/stories260K.gguf"), str(CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf"),
                             str(TEXT), "--ctx", "128"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "tokenizes the text differently" in result.stderr and result.stdout == ""


def test_a_text_too_short_for_its_context_is_refused_alike_everywhere_with_the_context_that_fits(tmp_path):
    # llama-perplexity's rule (at least two windows of --ctx tokens) holds for perplexity and kld
    # on the command line and for perplexity and compareModels in cells; each names the context
    # that would fit, in its own option's words, and prints no usage (the arguments were valid).
    model = str(SHARED / "models/stories260K.gguf")
    short = tmp_path / "short.txt"
    short.write_text("Once upon a time there was a girl. She liked to play with her dog in the park.")
    for command in (["perplexity", model, str(short)], ["kld", model, model, str(short)]):
        result = subprocess.run([lumen_bin(), *command, "--no-log"], capture_output=True, text=True, timeout=120)
        assert result.returncode == 1 and result.stdout == "", result.stderr
        match = re.search(r"the text has (\d+) tokens; a context of 512 needs at least 1024 \(two windows\); --ctx (\d+) fits it", result.stderr)
        assert match and int(match.group(2)) == int(match.group(1)) // 2, result.stderr
        assert "Usage:" not in result.stderr
        fits = subprocess.run([lumen_bin(), *command, "--ctx", match.group(2), "--no-log"], capture_output=True, text=True, timeout=120)
        assert fits.returncode == 0, fits.stderr
    script = f'''let m = load("{model}")
let text = "{short.read_text()}"
perplexity(m, text, context: 512)
compareModels(m, m, text, context: 512)
print(perplexity(m, text) > 1, compareModels(m, m, text) >= 0)
'''
    result = subprocess.run([lumen_bin(), "repl", "--keep-going", "--no-log"], input=script, capture_output=True, text=True, timeout=120)
    assert result.stderr.count("needs at least 1024 (two windows); context: ") == 2, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["true true"], result.stdout
