#!/usr/bin/env bash
# agentenv-aws (ECR) and agentenv-gcp (Artifact Registry) image stores push image data to a local registry: Debian's
# docker-registry, which their tests start themselves on a free loopback port with their own config (the package's
# own service is not used). Without it those tests skip; under .ci/run (AGENTENV_CI=1) they fail instead.
set -euo pipefail
if command -v docker-registry >/dev/null 2>&1; then exit 0; fi
flock /tmp/apt.lock apt-get update -qq
DEBIAN_FRONTEND=noninteractive flock /tmp/apt.lock apt-get install -y -qq --no-install-recommends docker-registry >/dev/null
