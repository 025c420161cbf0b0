#!/bin/bash
# Harbor convention: write the reward to /logs/verifier/reward.txt.
mkdir -p /logs/verifier
if [ "$(cd /app && python3 greet.py)" = "Hello, world!" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
