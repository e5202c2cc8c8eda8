"""The test suite's own machinery in tests/conftest.py: the order tests are handed out in."""

import re
from pathlib import Path

import pytest

import conftest

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("entry", conftest.RUN_FIRST)
def test_each_run_first_entry_names_a_test(entry):
    """A renamed or deleted test would silently drop out of the order: each entry's file has the
    test function, and a parameter id given is one of that file's ids."""
    file, _, test = entry.partition("::")
    name, _, parameters = test.partition("[")
    source = (TESTS / file).read_text()
    assert re.search(rf"^def {re.escape(name)}\(", source, re.M), f"{file} has no {name}"
    if parameters:
        assert f'"{parameters.rstrip("]")}"' in source, f"{file} has no parameter id ({entry})"


def test_run_first_entries_come_first_in_their_order_and_the_rest_keep_theirs():
    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid

    first, second = conftest.RUN_FIRST[:2]
    names = ["tests/test_a.py::test_one", f"tests/{second}", "tests/test_a.py::test_two",
             f"tests/{first}[some-parameter]" if "[" not in first else f"tests/{first}",
             "tests/test_b.py::test_three"]
    items = [Item(name) for name in names]
    conftest.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == [names[3], names[1], names[0], names[2], names[4]]
    assert len(set(conftest.RUN_FIRST)) == len(conftest.RUN_FIRST)
