"""`lumen generate --prompt-cache` (llama.cpp's flag): the greedy output is the same with and
without it, a second run reuses the saved prompt, and a state of another model or a damaged file
is refused, saying which."""
import json
import re
import subprocess

from conftest import lumen_bin
from servers import CACHE, SMOLLM2

GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
PROMPT = "The history of the city begins in the bronze age, when traders settled by the river. " * 12


def generate(model, prompt, *extra):
    result = subprocess.run([lumen_bin(), "generate", str(model), prompt, "-n", "16", "--temp", "0", "--json", "--no-log", *extra],
                            capture_output=True, text=True, timeout=300)
    return result


def test_prompt_cache_keeps_greedy_output_and_skips_the_saved_prompt(tmp_path):
    state = tmp_path / "prompt.state"
    plain = generate(SMOLLM2, PROMPT + "Then")
    assert plain.returncode == 0, plain.stderr
    first = generate(SMOLLM2, PROMPT + "Then", "--prompt-cache", str(state))
    assert first.returncode == 0, first.stderr
    assert state.exists() and first.stdout == plain.stdout
    saved = state.stat().st_mtime_ns
    # A longer prompt that starts with the saved one: its whole batches are not read again.
    second = generate(SMOLLM2, PROMPT + "Then the", "--prompt-cache", str(state), "--prompt-cache-ro")
    assert second.returncode == 0, second.stderr
    reused = int(re.search(r"prompt tokens \((\d+) reused\)", second.stderr).group(1))
    assert reused >= 128, second.stderr
    assert second.stdout == generate(SMOLLM2, PROMPT + "Then the").stdout
    assert state.stat().st_mtime_ns == saved
    # A state of another model, or a damaged one, is refused.
    other = generate(GEMMA, PROMPT, "--prompt-cache", str(state))
    assert other.returncode == 1 and "state: was made by another model file (SHA-256" in other.stderr, other.stderr
    damaged = tmp_path / "damaged.state"
    data = bytearray(state.read_bytes())
    data[-100] ^= 0xFF
    damaged.write_bytes(bytes(data))
    broken = generate(SMOLLM2, PROMPT, "--prompt-cache", str(damaged))
    assert broken.returncode == 1 and "its keys and values (and recurrent state) were changed or cut short" in broken.stderr, broken.stderr


def test_a_state_file_changed_anywhere_is_refused_naming_the_part(tmp_path):
    state = tmp_path / "prompt.state"
    assert generate(SMOLLM2, PROMPT, "--prompt-cache", str(state)).returncode == 0
    data = state.read_bytes()
    header_end = 12 + int.from_bytes(data[8:12], "little")
    header = json.loads(data[12:header_end])
    # The token list replaced by another text's of the same length: once accepted ("640 reused").
    forged = dict(header, tokens=[header["tokens"][0]] + [29871] * (len(header["tokens"]) - 1))
    text = json.dumps(forged, separators=(",", ":")).encode()
    cases = {
        "header": data[:8] + len(text).to_bytes(4, "little") + text + data[header_end:],
        "keys and values": data[:header_end + 10] + bytes([data[header_end + 10] ^ 1]) + data[header_end + 11:],
        "checksum": data[:-1] + bytes([data[-1] ^ 1]),
        "cut": data[:-40],
    }
    reasons = {
        "header": "its header (model binding, cache shape or tokens) or the checksum itself was changed",
        "keys and values": "its keys and values (and recurrent state) were changed or cut short",
        "checksum": "its header (model binding, cache shape or tokens) or the checksum itself was changed",
        "cut": "the file's checksum does not match",
    }
    for name, content in cases.items():
        damaged = tmp_path / f"{name}.state"
        damaged.write_bytes(content)
        result = generate(SMOLLM2, PROMPT, "--prompt-cache", str(damaged))
        assert result.returncode == 1 and "is corrupt" in result.stderr and reasons[name] in result.stderr, (name, result.stderr)
