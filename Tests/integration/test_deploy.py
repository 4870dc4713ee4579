"""deploy/: the Kubernetes manifests checked against their schemas — kubernetes-validate's for the
Deployment, the InferencePool CRD's own (Tests/reference/kubernetes/) for the pool, both strict
about unknown fields as `kubectl apply` is; no cluster here to apply them to — the pool selecting
the Deployment's pods on their port, and the container's arguments (the Deployment's and the
Containerfile's default command) run by the real lumen: the probes' paths and /metrics answer, the
key is asked for, and readiness turns false at SIGTERM."""
import copy
import json
import os
import pathlib
import re
import secrets
import signal
import time

import jsonschema
import kubernetes_validate
import pytest
import yaml

from conftest import lumen_bin
from servers import Server
from test_serve_hardening import request

ROOT = pathlib.Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
POOL_CRD = ROOT / "Tests" / "reference" / "kubernetes" / "inference.networking.k8s.io_inferencepools.yaml"
# The oldest Kubernetes the Inference Extension's v1 API supports, and the newest kubernetes-validate knows.
KUBERNETES_VERSIONS = ("1.29", kubernetes_validate.latest_version())


def manifest(name):
    """The one document of deploy/kubernetes/`name`."""
    [document] = list(yaml.safe_load_all((KUBERNETES / name).read_text()))
    return document


def strict(schema):
    """`schema` refusing properties it does not name, at every level that names some (what
    `kubectl apply`'s strict field validation does with a CRD's structural schema)."""
    schema = copy.deepcopy(schema)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return schema


def pool_validator():
    """A validator of InferencePool objects: the CRD's v1 openAPIV3Schema, strict."""
    crd = yaml.safe_load(POOL_CRD.read_text())
    [version] = [version for version in crd["spec"]["versions"] if version["name"] == "v1"]
    return jsonschema.Draft7Validator(strict(version["schema"]["openAPIV3Schema"]))


def container(deployment):
    [only] = deployment["spec"]["template"]["spec"]["containers"]
    return only


def option(arguments, name):
    """The value after `name` in a command line."""
    return arguments[arguments.index(name) + 1]


def test_manifests_are_valid_kubernetes_objects_and_typos_are_caught():
    deployment, pool = manifest("lumen.yaml"), manifest("inferencepool.yaml")
    for version in KUBERNETES_VERSIONS:
        kubernetes_validate.validate(deployment, version, strict=True)
    assert pool["apiVersion"] == "inference.networking.k8s.io/v1" and pool["kind"] == "InferencePool"
    validator = pool_validator()
    validator.validate(pool)
    # The validators refuse what a cluster would: a misspelt field, a port out of range.
    misspelt = copy.deepcopy(deployment)
    misspelt["spec"]["replica"] = misspelt["spec"].pop("replicas")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(misspelt, KUBERNETES_VERSIONS[-1], strict=True)
    for mistake in ({"targetPort": pool["spec"]["targetPorts"]}, {"targetPorts": [{"number": 70000}]}, {"targetPorts": []}):
        broken = copy.deepcopy(pool)
        broken["spec"].pop("targetPorts")
        broken["spec"].update(mistake)
        assert not validator.is_valid(broken), mistake


def test_the_pool_selects_the_deployments_pods_on_their_port_with_the_probes_lumen_answers():
    deployment, pool = manifest("lumen.yaml"), manifest("inferencepool.yaml")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pool["spec"]["selector"]["matchLabels"].items() <= labels.items()
    lumen = container(deployment)
    ports = {port["name"]: port["containerPort"] for port in lumen["ports"]}
    arguments = lumen["args"]
    assert [port["number"] for port in pool["spec"]["targetPorts"]] == [int(option(arguments, "--port"))] == list(ports.values())
    # The CRD's CEL rules, which a schema validator does not run: a Service picker has a port.
    picker = pool["spec"]["endpointPickerRef"]
    assert picker.get("kind", "Service") != "Service" or "port" in picker
    probes = {probe: (lumen[probe]["httpGet"]["path"], ports[lumen[probe]["httpGet"]["port"]])
              for probe in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes == {"startupProbe": ("/health", 8000), "livenessProbe": ("/health", 8000), "readinessProbe": ("/ready", 8000)}
    # Kubernetes kills the pod after its grace period: the drain and the running requests' grace fit in it.
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert float(option(arguments, "--drain-delay")) + float(option(arguments, "--shutdown-grace")) < grace
    assert option(arguments, "--api-key-env") in {variable["name"] for variable in lumen["env"]}


def containerfile_command():
    """The Containerfile's ENTRYPOINT and CMD, as one command line."""
    text = CONTAINERFILE.read_text()
    parts = [json.loads(re.search(rf"^{instruction} (\[.*\])$", text, re.MULTILINE).group(1)) for instruction in ("ENTRYPOINT", "CMD")]
    return parts[0] + parts[1]


def ready(server):
    """Whether a readiness probe passes: 200, where a refused connection fails as a 503 does."""
    try:
        return request(server, "GET", "/ready")[0] == 200
    except ConnectionError:
        return False


def chat(server, key=None):
    """Status and body of a 3-token chat completion, with `key` or without one."""
    body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3}
    status, _, answer = request(server, "POST", "/v1/chat/completions", body, headers={"Authorization": f"Bearer {key}"} if key else None)
    return status, answer


@pytest.mark.parametrize("source", ["deployment", "containerfile"])
def test_the_container_command_serves_with_probes_metrics_and_a_key(tmp_path, source):
    """The command line the pod or the image runs (with loopback and a free port for 0.0.0.0 and
    its port; the model found by name in the model cache, as the image's /models)."""
    command = ["lumen", *container(manifest("lumen.yaml"))["args"]] if source == "deployment" else containerfile_command()
    assert command[0] == "lumen"
    arguments = command[1:]
    arguments[arguments.index("--host") + 1] = "127.0.0.1"
    arguments[arguments.index("--port") + 1] = "0"
    key = secrets.token_hex(16)
    variable = option(arguments, "--api-key-env")
    env = dict(os.environ, HOME=str(tmp_path), LUMEN_LOG_PATH=str(tmp_path / "runs.sqlite"), **{variable: key})
    server = Server([lumen_bin(), *arguments], env=env)
    try:
        url = server.wait_for(r"at (http://\S+)/v1").group(1)
        host, port = url.removeprefix("http://").rsplit(":", 1)
        server.address = (host, int(port))
        assert request(server, "GET", "/health")[0] == 200
        assert request(server, "GET", "/ready")[0] == 200
        status, _, metrics = request(server, "GET", "/metrics")
        assert status == 200
        metrics = metrics.decode()
        for gauge in ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc"):
            assert re.search(rf"^{re.escape(gauge)}\{{model_name=", metrics, re.MULTILINE), gauge
        assert chat(server)[0] == 401
        status, body = chat(server, key)
        assert status == 200, body
        assert key not in "".join(server.lines)
        server.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 60
        while ready(server):
            assert time.monotonic() < deadline, "/ready still 200 a minute after SIGTERM"
            time.sleep(0.05)
        if "--drain-delay" in arguments:
            # Still answering during the drain, so the gateway has time to stop sending.
            assert request(server, "GET", "/health")[0] == 200
    finally:
        server.stop()
