"""The fields ordinary clients send — `frequency_penalty`, `presence_penalty`, `repeat_penalty`,
`repeat_last_n` and `logit_bias` in both of llama-server's forms — against llama.cpp's own
`llama-server` on the same model: greedy, the same text token for token; the same flags on
`lumen generate` give it too; what neither can mean is a 400 naming the field; and the `openai`
client's typed calls, `n` choices among them.

The texts are compared over 16 tokens of one prompt, code, whose greedy paths have no near-ties
there: llama.cpp's own front ends part on others (on "The capital of France is", llama-cpp-python's
greedy text, the repository's reference, and llama-server's differ from the 5th token, " The answer
is" against " The United States"; with penalties, Lumen's and llama-server's at a year's digits,
"321" against "312"), so such texts would test llama.cpp's spread, not the sampling."""
import subprocess

import pytest

from conftest import lumen_bin
from servers import SMOLLM2, start_llama_cpp_server, start_lumen_serve
from test_remote import post

PROMPT = "def fibonacci(n):"
LENGTH = 16
MODEL = SMOLLM2.stem


@pytest.fixture(scope="module")
def pair():
    """`lumen serve` and `llama-server` on SmolLM2."""
    lumen = start_lumen_serve()
    llama = start_llama_cpp_server()
    yield lumen, llama
    lumen.stop()
    llama.stop()


def complete(server, prompt=PROMPT, **fields):
    status, answer = post(server.url + "/completions", {"prompt": prompt, "max_tokens": LENGTH, "temperature": 0, "seed": 1, **fields})
    assert status == 200, answer
    return answer["choices"][0]["text"]


def token_ids(server, text):
    """`text`'s tokens, by llama-server's tokenizer."""
    status, answer = post(server.url.removesuffix("/v1") + "/tokenize", {"content": text})
    assert status == 200, answer
    return answer["tokens"]


CASES = {
    "penalties": {"repeat_penalty": 1.3, "frequency_penalty": 0.6, "presence_penalty": 0.4},
    "short window": {"frequency_penalty": 1.5, "repeat_last_n": 8},
    "presence alone": {"presence_penalty": 2.0},
}


@pytest.mark.parametrize("case", CASES)
def test_penalties_give_llama_servers_text(pair, case):
    lumen, llama = pair
    plain = complete(lumen)
    ours = complete(lumen, **CASES[case])
    assert ours == complete(llama, **CASES[case])
    # The fields are applied, not ignored: the text they give is not the plain greedy one.
    assert ours != plain


def test_logit_bias_by_id_text_and_ban_in_both_forms_gives_llama_servers_text(pair):
    lumen, llama = pair
    plain = complete(lumen)
    banned = token_ids(llama, plain)[0]
    favoured = token_ids(llama, " if")[0]
    as_object = {"logit_bias": {str(banned): False, str(favoured): 1.5, " the": 1}}
    as_pairs = {"logit_bias": [[banned, False], [favoured, 1.5], [" the", 1]]}
    ours = complete(lumen, **as_object)
    assert ours == complete(llama, **as_object) == complete(lumen, **as_pairs) == complete(llama, **as_pairs)
    assert token_ids(llama, ours)[0] != banned and ours != plain
    # -100, as OpenAI's clients ban, is a bias like any other.
    assert complete(lumen, logit_bias={str(banned): -100}) == complete(llama, logit_bias={str(banned): -100})


def test_the_command_line_flags_give_the_servers_text(pair):
    lumen, _ = pair
    favoured = token_ids(pair[1], " return")[0]
    expected = complete(lumen, repeat_penalty=1.3, frequency_penalty=0.6, presence_penalty=0.4, repeat_last_n=32,
                        logit_bias={str(favoured): 2.5})
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "-n", str(LENGTH), "--temp", "0", "--repeat-penalty", "1.3",
                             "--frequency-penalty", "0.6", "--presence-penalty", "0.4", "--repeat-last-n", "32", "--logit-bias", f"{favoured}+2.5"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(expected), (result.stdout, expected)
    refused = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "--logit-bias", "99999999+1"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--logit-bias: 99999999 is not a token id (the vocabulary has 49152)" in refused.stderr
    malformed = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), PROMPT, "--logit-bias", "cat=1"], capture_output=True, text=True, timeout=120)
    assert malformed.returncode == 2 and "--logit-bias takes TOKEN_ID+BIAS or TOKEN_ID-BIAS" in malformed.stderr


@pytest.mark.parametrize("fields, message", [
    ({"logit_bias": {"99999999": 1}}, "logit_bias names token 99999999, which is not in the model's vocabulary of 49152"),
    ({"logit_bias": {"15": True}}, "a bias must be a number, or false to ban the token; got true"),
    ({"logit_bias": [[15, 1, 2]]}, "each pair must be [token, bias]"),
    ({"logit_bias": {"15": "high"}}, "a bias must be a number, or false to ban the token"),
    ({"repeat_last_n": -1}, "repeat_last_n must be 0 or more, got -1"),
    ({"typical_p": 0.9}, "unknown field 'typical_p'"),
])
def test_what_the_fields_cannot_mean_is_a_400_naming_the_field(pair, fields, message):
    lumen, _ = pair
    status, answer = post(lumen.url + "/completions", {"prompt": PROMPT, "max_tokens": 2, **fields})
    assert status == 400, answer
    assert message in answer["error"]["message"]
    assert answer["error"]["param"] == next(iter(fields))


def test_the_openai_clients_typed_calls_send_the_fields_and_get_n_choices(pair):
    """The official client's typed calls: penalties and `logit_bias` as it sends them, and `n`
    choices, whole and streamed, choice i being the one request with seed + i."""
    import openai
    lumen, llama = pair
    client = openai.OpenAI(base_url=lumen.url, api_key="unused")
    favoured = token_ids(llama, " if")[0]
    typed = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=LENGTH, temperature=0, seed=1, frequency_penalty=0.6,
                                      presence_penalty=0.4, logit_bias={str(favoured): 1.5})
    assert typed.choices[0].text == complete(lumen, frequency_penalty=0.6, presence_penalty=0.4, logit_bias={str(favoured): 1.5})

    sampled = {"model": MODEL, "prompt": PROMPT, "max_tokens": 12, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
    whole = client.completions.create(n=3, seed=5, extra_body={key: sampled[key] for key in ("top_k", "min_p")},
                                      **{key: sampled[key] for key in ("model", "prompt", "max_tokens", "temperature", "top_p")})
    assert [choice.index for choice in whole.choices] == [0, 1, 2]
    singles = [post(lumen.url + "/completions", {**sampled, "seed": 5 + index})[1] for index in range(3)]
    assert [choice.text for choice in whole.choices] == [single["choices"][0]["text"] for single in singles]
    assert len({choice.text for choice in whole.choices}) > 1
    assert whole.usage.completion_tokens == sum(single["usage"]["completion_tokens"] for single in singles)
    assert whole.usage.prompt_tokens == singles[0]["usage"]["prompt_tokens"]

    chat = {"model": MODEL, "messages": [{"role": "user", "content": "Name a colour."}], "max_tokens": 8, "temperature": 1.0, "seed": 9}
    answer = client.chat.completions.create(n=2, **chat)
    streamed = {0: "", 1: ""}
    finished = set()
    roles = set()
    for chunk in client.chat.completions.create(n=2, stream=True, stream_options={"include_usage": True}, **chat):
        for choice in chunk.choices:
            streamed[choice.index] += choice.delta.content or ""
            if choice.delta.role:
                roles.add(choice.index)
            if choice.finish_reason:
                finished.add(choice.index)
        if chunk.usage:
            assert chunk.usage.completion_tokens == answer.usage.completion_tokens
    assert [streamed[0], streamed[1]] == [choice.message.content for choice in answer.choices]
    assert roles == finished == {0, 1}
    status, refused = post(lumen.url + "/completions", {"prompt": PROMPT, "n": 17})
    assert status == 400 and refused["error"]["param"] == "n" and "n must be in 1…16, got 17" in refused["error"]["message"]
