"""The streammap binary that the wheel (``pip install streammap_spark-….whl``) put beside this package.

The ``streammap-spark`` wheel (``scripts/build-wheel.py``) carries the portable binary as a script of the
distribution (``streammap_spark-VERSION.data/scripts/streammap``): pip installs it into the environment's scripts folder (``bin/``),
the user scheme's with ``pip install --user``, or ``TARGET/bin`` with ``pip install --target TARGET``. This is
where ``packaged_binary`` looks, in that order, the way Ruff's ``find_ruff_bin`` does; ``resolve_binary`` asks it
after ``binary=`` and ``$STREAMMAP_BINARY``, before ``streammap`` on ``PATH``.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from typing import List, Optional

__all__ = ["packaged_binary"]


def _user_scheme() -> str:
    """The install scheme of ``pip install --user`` on this interpreter."""
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return f"{os.name}_user"


def _package_root() -> str:
    """The folder this package is installed in (site-packages, or the ``--target`` folder)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _scripts_folders() -> List[str]:
    folders = [sysconfig.get_path("scripts")]
    try:
        folders.append(sysconfig.get_path("scripts", _user_scheme()))
    except KeyError:  # an interpreter without a user scheme
        pass
    folders.append(os.path.join(_package_root(), "bin"))  # pip install --target TARGET: TARGET/bin
    return [f for f in folders if f]


def packaged_binary() -> Optional[str]:
    """The ``streammap`` executable the ``streammap-spark`` wheel installed for this Python environment: in its scripts
    folder (``sysconfig.get_path("scripts")``: ``bin/`` of a virtual environment), else the user scheme's
    (``pip install --user``), else ``bin/`` beside the package (``pip install --target``); ``None`` when none of
    them holds one (a source checkout, or the package installed without the wheel)."""
    name = "streammap" + (sysconfig.get_config_var("EXE") or "")
    for folder in _scripts_folders():
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
