"""OR-Tools' ``cp_model``, loaded without pandas until something reads pandas through it.

``cp_model`` imports pandas when it loads, for its pandas-typed helpers (``new_int_var_series``
and the like), which tiles never calls. pandas, with the pyarrow it loads when installed, is
~280 ms and ~75 MB in every process that builds a model: the nightly and its forked halves, the
referee, a drain. So ``cp_model`` is loaded here with a stand-in ``pandas`` module holding the two
names its module body reads (``Index`` and ``Series``, as placeholder classes in its annotations),
and its ``pd`` is then pointed at a proxy that imports the real pandas the first time one of those
helpers reads an attribute of it: the helpers work as before, only later. The stand-in never stays
in ``sys.modules`` (any other ``import pandas`` gets the real one); when pandas or ``cp_model`` is
already loaded, nothing is replaced.

``engine.cpsat`` and ``referee.frontier`` take ``cp_model`` from here (one loader; each keeps its
own model encoding).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

_CP_MODEL = "ortools.sat.python.cp_model"


class _LazyPandas(types.ModuleType):
    """``pandas`` as cp_model's module global: the real module, imported at the first read."""

    def __getattr__(self, name: str) -> Any:
        import pandas

        return getattr(pandas, name)


def load() -> types.ModuleType:
    """The ``cp_model`` module (see the module doc)."""
    if _CP_MODEL in sys.modules or "pandas" in sys.modules:
        from ortools.sat.python import cp_model

        return cp_model
    stand_in = types.ModuleType("pandas", "tiles' stand-in while OR-Tools' cp_model loads")
    stand_in.Index = type("Index", (), {})  # type: ignore[attr-defined]
    stand_in.Series = type("Series", (), {})  # type: ignore[attr-defined]
    sys.modules["pandas"] = stand_in
    try:
        from ortools.sat.python import cp_model
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]
    if getattr(cp_model, "pd", None) is stand_in:
        cp_model.pd = _LazyPandas("pandas")
    return cp_model


if TYPE_CHECKING:  # the checker reads OR-Tools' own module and its names
    from ortools.sat.python import cp_model
else:
    cp_model = load()
