"""Starts moto's server with the extension: python -m kbp_emulator [-H HOST] [-p PORT].

The latency profile comes from KBP_EMULATOR_PROFILE (a name in emulator/profiles/ or a path; default instant)
and KBP_EMULATOR_TIME_SCALE (default 1); KBP_EMULATOR_CONTRACT=off turns AWS's input contract off (`contract`).
Everything else is moto's own server and its options.
"""

from __future__ import annotations

import sys

from moto import server

from . import install_services, lifecycle, patching_on_first_use
from .contract import middleware
from .profile import ProfileError, from_env


def main(argv: list[str] | None = None) -> None:
    try:
        profile = from_env()
    except ProfileError as e:
        sys.exit(f"kbp_emulator: {e}")
    lifecycle.use(profile)
    # moto.server.main builds its dispatcher from this module-level name.
    server.create_backend_app = patching_on_first_use(server.create_backend_app)
    install_services()
    timed = ", ".join(f"{op}={profile.delay(op):g}s" for op in sorted(profile.seconds) if profile.delay(op))
    print(f"kbp_emulator: latency profile {profile.name} x{profile.time_scale:g} ({timed or 'all instant'}); "
          f"AWS input contract {'on' if middleware.enabled() else f'off ({middleware.SWITCH_ENV})'}",
          file=sys.stderr, flush=True)
    server.main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
