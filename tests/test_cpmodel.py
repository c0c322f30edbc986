"""OR-Tools' cp_model is loaded without pandas (tilelib.cpmodel): pandas comes only when read."""

import subprocess
import sys
import textwrap


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_models_load_without_pandas_and_its_helpers_still_get_the_real_one():
    got = _run(
        """
        import sys
        import engine.cpsat, referee.frontier
        from tilelib.cpmodel import cp_model
        print("pandas" in sys.modules, "pyarrow" in sys.modules)
        import pandas as pd  # the real one: the stand-in never stays in sys.modules
        s = cp_model.CpModel().new_int_var_series(name="x", index=pd.Index(range(3)), lower_bounds=0, upper_bounds=1)
        print(type(s) is pd.Series, len(s), hasattr(pd, "DataFrame"), isinstance(pd.Series([1]), cp_model.pd.Series))
        """
    )
    assert got == ["False", "False", "True", "3", "True", "True"]


def test_a_process_that_already_has_pandas_keeps_it_in_cp_model():
    got = _run(
        """
        import pandas
        from tilelib.cpmodel import cp_model
        print(cp_model.pd is pandas)
        """
    )
    assert got == ["True"]
