"""Every Python view of a step's fields agrees with the one Rust list, `_tally.STEP_FIELDS`."""

import inspect

import tally
from tally import _tally, distributed


def _keyword_params(fn):
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY]


def test_logger_step_takes_exactly_the_step_fields():
    names = [n for n, _ in _tally.STEP_FIELDS]
    assert _keyword_params(tally.Logger.step) == names


def test_step_with_rates_takes_the_rates_then_the_step_fields():
    names = [n for n, _ in _tally.STEP_FIELDS]
    params = _keyword_params(tally.Logger.step_with_rates)
    assert params[:2] == ["env_steps_per_sec", "rows_per_sec"]
    assert sorted(params[2:]) == sorted(names)


def test_distributed_reduces_every_step_field():
    covered = {"env_steps", "system", *distributed.MAP_FIELDS, *(n for n, _ in distributed.SCALAR_FIELDS)}
    assert covered == {n for n, _ in _tally.STEP_FIELDS}
    numbers = {n for n, k in _tally.STEP_FIELDS if k == "number"}
    assert {n for n, _ in distributed.SCALAR_FIELDS} == numbers
