"""tools/mutation.py's --sample K/R: the residues R of one K draw disjoint samples that together
hold every mutant, and bad values are refused with a line naming them."""
import argparse
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutation.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sampled(tool, sample):
    """The mutmut config's selection function, as the tool writes it."""
    text = tool.MUTMUT_CONFIG.format(selection="{}", pytest=[], limit=0, sample=sample)
    scope = {}
    exec(compile(text, "mutmut_config.py", "exec"), scope)
    return scope["_sampled"]


def mutants(count):
    return [SimpleNamespace(filename=f"host/f{i % 7}.py",
                            mutation_id=SimpleNamespace(line=f"    x = {i}\n", index=i % 3))
            for i in range(count)]


def test_the_residues_of_one_k_partition_the_mutants(tool):
    population = mutants(400)
    picks = [{id(m) for m in population if sampled(tool, (4, r))(m)} for r in range(4)]
    assert all(picks), "every residue draws some mutants"
    assert sum(len(p) for p in picks) == len(population)
    assert set().union(*picks) == {id(m) for m in population}
    assert all(sampled(tool, (1, 0))(m) for m in population)


def test_k_alone_is_residue_0(tool):
    assert tool.parse_sample("50") == (50, 0)
    assert tool.parse_sample("50/49") == (50, 49)


@pytest.mark.parametrize("text, words", [("0", "K must be at least 1"), ("5/5", "R must be 0 to K - 1"),
                                         ("5/-1", "R must be 0 to K - 1"), ("x", "a sample is K or K/R")])
def test_a_bad_sample_is_refused_with_its_reason(tool, text, words):
    with pytest.raises(argparse.ArgumentTypeError, match=words):
        tool.parse_sample(text)
