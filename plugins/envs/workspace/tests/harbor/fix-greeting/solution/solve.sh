#!/bin/bash
set -e
cd /app
sed -i 's/Hello, world")/Hello, world!")/' greet.py
