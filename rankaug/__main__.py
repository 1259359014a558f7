"""``python -m rankaug``: the command line (see :mod:`rankaug.cli`)."""

from rankaug.cli import main

if __name__ == "__main__":  # spawned processes import this module as __mp_main__
    raise SystemExit(main())
