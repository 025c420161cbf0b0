#!/usr/bin/env bash
# agentenv-store-mongo's tests run the document-store kit against a real mongod when one is installed, and against
# mongoeco's MongoDB wire-protocol server (PyPI, Python 3.13) in a venv of its own. This script installs mongod from
# Debian's packages if Debian has one: bookworm has none (MongoDB left Debian with its licence change, and its own
# downloads are not reachable here), so those tests skip, saying why. Then it makes mongoeco's venv ahead of the
# tests (uv's shared cache, kept under ~/.cache/agentenv/framework-venvs and reused). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v mongod >/dev/null 2>&1; then
  ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1 || flock /tmp/apt.lock apt-get update -qq
  for package in mongodb-server mongodb-server-core mongodb-org-server; do
    if apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      DEBIAN_FRONTEND=noninteractive flock /tmp/apt.lock \
        apt-get install -y -qq --no-install-recommends "$package" >/dev/null
      break
    fi
  done
fi
echo "45-mongodb: mongod: $(command -v mongod || echo "none in Debian's packages (the real-mongod tests skip)")"
echo "45-mongodb: mongoeco: $(.venv/bin/python plugins/stores/mongo/tests/mongo_servers.py)"
