#!/bin/sh
# Harbor-style check: writes 1 to /logs/verifier/reward.txt when report.txt is right, else 0.
mkdir -p /logs/verifier
expected="$(printf 'api 1\ndb 3\nworker 1\n')"
if [ -f report.txt ] && [ "$(cat report.txt)" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
