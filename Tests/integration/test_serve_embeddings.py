"""`lumen serve`'s `/v1/embeddings` against llama.cpp's own `llama-server --embeddings` on the same
model and pooling, and its refusals in OpenAI's error shape."""
import base64
import struct

import numpy as np
import pytest

from servers import start_llama_cpp_server, start_lumen_serve
from test_remote import post

TEXTS = ["The capital of France is Paris.", "A cat sat on the mat.", "Quantum chromodynamics describes the strong force."]


@pytest.fixture(scope="module", params=["mean", "last"])
def pair(request):
    """`lumen serve` and `llama-server`, both pooling as `request.param`."""
    lumen = start_lumen_serve("--pooling", request.param)
    llama = start_llama_cpp_server("--embeddings", "--pooling", request.param)
    yield lumen, llama
    lumen.stop()
    llama.stop()


def vectors(answer):
    return [np.array(item["embedding"], dtype=np.float64) for item in sorted(answer["data"], key=lambda item: item["index"])]


def test_embeddings_are_llama_servers_for_texts_and_token_ids(pair):
    lumen, llama = pair
    status, ours = post(lumen.url + "/embeddings", {"input": TEXTS})
    assert status == 200, ours
    _, theirs = post(llama.url + "/embeddings", {"input": TEXTS})
    assert ours["object"] == "list" and [item["index"] for item in ours["data"]] == [0, 1, 2]
    assert ours["usage"]["prompt_tokens"] == theirs["usage"]["prompt_tokens"] == ours["usage"]["total_tokens"]
    for mine, reference in zip(vectors(ours), vectors(theirs)):
        assert mine.shape == (576,) and abs(np.linalg.norm(mine) - 1) < 1e-4
        assert mine @ reference / np.linalg.norm(reference) >= 0.999
    # One text, and the same text's token ids, give the same vector; base64 carries the same floats.
    status, single = post(lumen.url + "/embeddings", {"input": TEXTS[0], "encoding_format": "base64"})
    assert status == 200
    packed = base64.b64decode(single["data"][0]["embedding"])
    decoded = np.array(struct.unpack(f"<{len(packed) // 4}f", packed), dtype=np.float64)
    assert np.allclose(decoded, vectors(ours)[0], atol=1e-6)
    _, tokenized = post(llama.url.removesuffix("/v1") + "/tokenize", {"content": TEXTS[0], "add_special": True})
    status, by_ids = post(lumen.url + "/embeddings", {"input": tokenized["tokens"]})
    assert status == 200 and np.allclose(vectors(by_ids)[0], vectors(ours)[0], atol=1e-6)


@pytest.mark.parametrize("body, param, message", [
    ({"input": TEXTS, "encoding_format": "int8"}, "encoding_format", 'encoding_format must be "float" or "base64", got "int8"'),
    ({"input": TEXTS, "dimensions": 64}, "dimensions", "dimensions must be the model's 576: vectors are not shortened"),
    ({"input": []}, "input", "input must hold 1 to 256 items, got 0"),
    ({"input": [[1, 2, 99999999]]}, "input", "token id 99999999 is outside the vocabulary of 49152"),
    ({"input": TEXTS, "truncate": True}, "truncate", "unknown field 'truncate'"),
    ({"input": {"text": "x"}}, "input", "input must be a string, an array of strings, an array of token ids or an array of such arrays"),
])
def test_bad_embedding_requests_are_refused_naming_the_field(pair, body, param, message):
    lumen, _ = pair
    status, answer = post(lumen.url + "/embeddings", body)
    assert status == 400 and answer["error"]["param"] == param and message in answer["error"]["message"], answer
