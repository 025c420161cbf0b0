"""Cross-distribution tests share small helpers (pytest runs in importlib mode, so put this folder on the path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
