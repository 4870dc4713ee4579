"""`lumen generate --lookup-ngram` and `--model-draft` (llama.cpp's flags): speculative decoding
gives plain decoding's output, greedy and seeded, and says how many drafts were accepted; a draft
model of another vocabulary is refused, naming it."""
import json
import os
import pathlib
import re
import subprocess

from conftest import lumen_bin
from servers import CACHE, SMOLLM2

GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
SHARED = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", ""))
PARAGRAPH = ("The city council met on Tuesday evening to discuss the new budget for the coming year. After a long debate, the members "
             "agreed to increase funding for public parks, repair the old bridge over the river, and hire more teachers.")
COPY = f"Copy the text below exactly.\n\nText: {PARAGRAPH}\n\nCopy: The city council"


def generate(model, *extra):
    return subprocess.run([lumen_bin(), "generate", str(model), COPY, "-n", "40", "--json", "--no-log", *extra],
                          capture_output=True, text=True, timeout=300)


def test_prompt_lookup_gives_plain_output_on_both_models():
    for model in (SMOLLM2, GEMMA):
        for sampling in (["--temp", "0"], ["--temp", "0.9", "--seed", "5"]):
            plain = generate(model, *sampling)
            lookup = generate(model, *sampling, "--lookup-ngram", "3", "--draft-max", "8")
            assert plain.returncode == 0 and lookup.returncode == 0, plain.stderr + lookup.stderr
            assert json.loads(lookup.stdout)["ids"] == json.loads(plain.stdout)["ids"], (model, sampling)
            drafted, accepted = map(int, re.search(r"(\d+) drafted, (\d+) accepted", lookup.stderr).groups())
            assert 0 < accepted <= drafted, lookup.stderr


def test_a_draft_model_gives_plain_output_and_one_of_another_vocabulary_is_refused():
    plain = generate(SMOLLM2, "--temp", "0")
    drafted = generate(SMOLLM2, "--temp", "0", "-md", str(SMOLLM2))
    assert drafted.returncode == 0, drafted.stderr
    assert json.loads(drafted.stdout)["ids"] == json.loads(plain.stdout)["ids"]
    assert re.search(r"\d+ drafted, \d+ accepted", drafted.stderr), drafted.stderr
    other = generate(SMOLLM2, "--model-draft", str(SHARED / "models" / "stories260K.gguf"))
    assert other.returncode == 1 and "stories260K.gguf" in other.stderr and "need one vocabulary" in other.stderr, other.stderr
    both = generate(SMOLLM2, "--lookup-ngram", "2", "--model-draft", str(SMOLLM2))
    assert both.returncode != 0 and "give one of --lookup-ngram and --model-draft" in both.stderr, both.stderr
