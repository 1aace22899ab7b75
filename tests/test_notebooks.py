"""Execute every notebook in notebooks/ headless: each code cell runs in
order in one namespace (matplotlib on its non-interactive backend); a cell
that raises fails the test, naming the notebook and the cell."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(path.parent)
    saved = dict(os.environ)  # a notebook may set NUMXLA_* for a demonstration: restored after
    from numxla.tracer.config import config
    monkeypatch.setattr(config, "jax_enable_x64", False)  # as a user runs it: JAX's default
    notebook = json.loads(path.read_text())
    namespace: dict = {"__name__": "__main__"}
    try:
        for number, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            try:
                exec(compile(source, f"{path.name}[cell {number}]", "exec"), namespace)
            except Exception as error:
                pytest.fail(f"{path.name}, cell {number} raised {type(error).__name__}: "
                            f"{error}\n{source}")
            finally:
                plt.close("all")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert os.getcwd() == str(path.parent)
