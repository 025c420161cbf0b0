"""Seeds: the run's seed → the seed MiniWoB++'s page gives `Math.seedrandom`, as BrowserGym derives it.

BrowserGym makes each MiniWoB task with `numpy.random.RandomState(seed)` and seeds the page with that
generator's `randint(0, 1000000)`. Doing the same (in pure Python: no numpy at run time) makes our seed N the
same task instance as BrowserGym's `env.reset(seed=N)`, which is what the agreement test compares.

numpy's legacy `RandomState(int)` seeds Mersenne Twister with `init_genrand` (Python's `random.seed` uses
`init_by_array` instead, so the state is built here and handed to `random.setstate`), and its bounded `randint`
masks 32-bit draws to the smallest covering power of two, rejecting draws above the bound.
"""

from __future__ import annotations

import random

PAGE_SEEDS = 1_000_000
"""BrowserGym draws page seeds from [0, 1,000,000)."""
_N = 624


def page_seed(seed: int) -> int:
    """The `Math.seedrandom` seed of MiniWoB's page for run seed `seed` (0 ≤ seed < 2**32), BrowserGym's way."""
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed {seed}: MiniWoB seeds are 0 ≤ seed < 2**32 (numpy's RandomState range)")
    state = [seed]
    for i in range(1, _N):
        previous = state[-1]
        state.append((1812433253 * (previous ^ (previous >> 30)) + i) & 0xFFFFFFFF)
    generator = random.Random()
    generator.setstate((3, (*state, _N), None))
    mask = (1 << (PAGE_SEEDS - 1).bit_length()) - 1
    while True:
        drawn = generator.getrandbits(32) & mask
        if drawn < PAGE_SEEDS:
            return drawn
