"""``make soak``: the reliability attacks of ``tests/reliability/``, randomised and longer.

Each area contributes ``tests/reliability/soak_<area>.py`` with ``soak(seconds, seed) -> figures``;
this driver runs them one after another, prints each area's figures and exits non-zero when a figure
that must be zero (messages lost, broken conversations, hung calls, leaks, mismatches, escaped or
untyped errors, calls over their deadline) is not.

Usage: ``python tests/reliability/soak.py [--seconds 60] [--seed N] [--only memory,tools]``
(``make soak SOAK_SECONDS=120``).
"""

from __future__ import annotations

import argparse
import importlib
import random
import resource
import sys
import time
from pathlib import Path

AREAS = ('memory', 'tools', 'http', 'partial')
MUST_BE_ZERO = (
    'messages_lost',
    'broken_conversations',
    'hung_calls',
    'key_leaks',
    'leaks',
    'mismatches',
    'escaped_errors',
    'untyped_errors',
    'over_deadline',
)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_area(area: str, seconds: float, seed: int) -> tuple[dict[str, float | int], bool]:
    module = importlib.import_module(f'soak_{area}')
    started = time.monotonic()
    figures = dict(module.soak(seconds, seed))
    figures.setdefault('peak_rss_mb', round(_peak_rss_mb(), 1))
    figures['wall_seconds'] = round(time.monotonic() - started, 1)
    failed = any(figures.get(name, 0) != 0 for name in MUST_BE_ZERO)
    return figures, failed


def main(argv: list[str] | None = None) -> int:
    """Run the soak of each area; print figures; exit 1 when a must-be-zero figure is not zero."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument('--seconds', type=float, default=60.0, help='time per area (default 60)')
    parser.add_argument('--seed', type=int, default=None, help='random seed (default: random, printed)')
    parser.add_argument('--only', default=','.join(AREAS), help=f'comma-separated areas of {AREAS}')
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    sys.path.insert(0, str(Path(__file__).parent))
    print(f'soak: seed {seed}, {args.seconds:g} s per area')
    failures = []
    for area in [a.strip() for a in args.only.split(',') if a.strip()]:
        if area not in AREAS:
            parser.error(f'unknown area {area!r}; choose from {AREAS}')
        figures, failed = _run_area(area, args.seconds, seed)
        print(f'{area}:', ', '.join(f'{name}={value}' for name, value in figures.items()), '  FAILED' if failed else '')
        if failed:
            failures.append(area)
    print('soak:', f'FAILED in {", ".join(failures)}' if failures else 'every must-be-zero figure is 0')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
