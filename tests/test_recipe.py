"""The RTLIL cache by recipe (hwgen.sim.recipe): a design hwgen builds from plain parameters (a
window filter, a pipeline of one of hwgen's jobs, either with its HMM) is found again without
converting it, and only such a design; what is found equals a fresh conversion by Amaranth."""

import gc
import json
import warnings

import numpy as np
import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module, UnusedElaboratable
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.instrument import Instrumented
from hwgen.instrument.hmm import HMM
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.reduction import Reduction
from hwgen.programs import GemmJob
from hwgen.sim import (compiled, engine as engines, harness, instrument_pe, instrument_pipeline,
                       recipe, run_window_filter)
from hwgen.sim.engine import choose_engine
from hwgen.sim.pysim_engine import PysimEngine

BASE = dict(op="max", size=(3, 3), width=16, height=6, unroll=2, buffer="line")


def _pe(**changes):
    return WindowFilter(**{**BASE, **changes})


@pytest.fixture(autouse=True)
def _quiet_unused():
    # Designs built only for their keys are never elaborated.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        yield
        gc.collect()


def test_equal_parameters_share_a_key_and_each_parameter_changes_it():
    assert recipe.recipe_key(_pe(), "top") == recipe.recipe_key(_pe(), "top")
    variants = [{}, {"op": "min"}, {"size": (3, 5)}, {"mask": "cross"}, {"width": 18},
                {"height": 7}, {"unroll": 4}, {"buffer": "smart"}, {"pixel_bits": 10},
                {"pipeline": False}, {"tree_stages": 0}, {"credits": 8}, {"addr_width": 20}]
    keys = [recipe.recipe_key(_pe(**v), "top") for v in variants]
    assert None not in keys and len(set(keys)) == len(keys)
    # What the design is converted as is part of the key.
    assert recipe.recipe_key(_pe(), "top") != recipe.recipe_key(_pe(), "other")


def test_instrument_pe_adds_its_options_to_the_recipe():
    keys = [recipe.recipe_key(d, "top") for d in (
        _pe(), instrument_pe(_pe()), instrument_pe(_pe(), probes="minimal"),
        instrument_pe(_pe(), timeline_depth=64), instrument_pe(_pe(), counter_bits=20))]
    assert None not in keys and len(set(keys)) == len(keys)
    assert recipe.recipe_key(instrument_pe(_pe()), "top") == keys[1]


class _User(wiring.Component):
    a: In(4)
    b: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.b.eq(self.a + 1)
        return m


class _Derived(WindowFilter):
    pass


def test_designs_hwgen_cannot_vouch_for_have_no_recipe():
    mine = Reduction("max", lambda a, b: a | b, None)
    assert recipe.recipe_of(_pe(op=mine)) is None           # the caller's own reduction
    assert recipe.recipe_of(_Derived(**BASE)) is None         # a subclass may build otherwise
    assert recipe.recipe_of(_User()) is None
    assert recipe.recipe_of(instrument_pe(_pe(op=mine))) is None
    # Options that are not plain data leave the design without a recipe.
    design = _pe()
    recipe.record_recipe(design, ["instrument_pe", object()])
    assert recipe.recipe_of(design) == recipe.recipe_of(_pe())


def test_the_key_follows_the_code_digest(monkeypatch):
    before = recipe.recipe_key(_pe(), "top")
    monkeypatch.setattr(recipe, "code_digest", lambda: "another code")
    assert recipe.recipe_key(_pe(), "top") != before


def test_the_code_digest_is_stable_within_a_process():
    digest = recipe.code_digest()
    assert len(digest) == 64 and digest == recipe.code_digest()


@pytest.mark.parametrize("make", [
    lambda: instrument_pe(_pe()),
    lambda: instrument_pe(_pe(op="min", mask="cross", buffer="smart"), probes="minimal"),
    lambda: _pe(pipeline=False),
])
def test_a_cached_rtlil_equals_a_fresh_conversion(monkeypatch, tmp_path, make):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    first = compiled.Source(make())
    assert len(list((tmp_path / "compiled").glob("*.il"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("converted again")

    monkeypatch.setattr(compiled.rtlil, "convert", refuse)
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = compiled.Source(make())
        text, path = again.text, again.path
        del again
        gc.collect()
    # Found without converting, and elaborated: nothing warns that it was never used.
    assert not [w for w in caught if issubclass(w.category, UnusedElaboratable)]
    monkeypatch.undo()
    fresh = make()
    assert text == rtlil.convert(fresh, name="top", ports=compiled._ports(fresh), emit_src=False)
    assert path == first.path


def test_a_short_job_runs_compiled_only_when_its_model_is_found_without_converting(
        monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    short = engines.SHORT_CYCLES
    # Nothing cached: Amaranth's simulator, and nothing converted.
    assert isinstance(choose_engine("auto", [instrument_pe(_pe())], cycles=short), PysimEngine)
    assert not (tmp_path / "compiled").exists() or not list((tmp_path / "compiled").iterdir())
    source = compiled.Source(instrument_pe(_pe()))
    # Its RTLIL is cached but no model is built yet: still Amaranth's simulator.
    assert isinstance(choose_engine("auto", [instrument_pe(_pe())], cycles=short), PysimEngine)
    source.path.write_bytes(b"")      # the model, as far as the choice can tell
    chosen = choose_engine("auto", [instrument_pe(_pe())], cycles=short)
    assert chosen.name == "compiled" and chosen.source.path == source.path
    # Another design of the same size has its own model.
    assert isinstance(choose_engine("auto", [instrument_pe(_pe(op="min"))], cycles=short),
                      PysimEngine)


def test_a_pipeline_of_one_of_hwgen_s_jobs_has_a_recipe_of_its_hardware_options():
    def key(**options):
        return recipe.recipe_key(recipe.pipeline_of(GemmJob(**options)), "top")

    assert key(dim=4, threads=2) == key(dim=4, threads=2)
    # The seed draws the matrices, not the hardware.
    assert key(dim=4, threads=2, seed=1) == key(dim=4, threads=2)
    keys = [key(dim=4, threads=2), key(dim=8, threads=2), key(dim=4, threads=4),
            key(variant="vector", dim=4, threads=2, lanes=2), key(dim=4, threads=2, frac_bits=4)]
    assert None not in keys and len(set(keys)) == len(keys)
    plain = recipe.pipeline_of(GemmJob(dim=4, threads=2))
    keys = [recipe.recipe_key(d, "top") for d in (
        plain, instrument_pipeline(recipe.pipeline_of(GemmJob(dim=4, threads=2))),
        instrument_pipeline(recipe.pipeline_of(GemmJob(dim=4, threads=2)), probes="minimal"),
        instrument_pipeline(recipe.pipeline_of(GemmJob(dim=4, threads=2)), sample_period=32))]
    assert None not in keys and len(set(keys)) == len(keys)


class _MyGemm(GemmJob):
    pass


def test_a_pipeline_made_otherwise_has_no_recipe():
    assert recipe.recipe_of(recipe.pipeline_of(_MyGemm(dim=4, threads=2))) is None
    assert recipe.recipe_of(Pipeline(GemmJob(dim=4, threads=2).program)) is None
    assert recipe.recipe_of(instrument_pipeline(Pipeline(GemmJob(dim=4, threads=2).program))) \
        is None


def test_a_pipeline_s_cached_rtlil_equals_a_fresh_conversion(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))

    def make():
        return instrument_pipeline(recipe.pipeline_of(GemmJob(dim=4, threads=2)),
                                   probes="minimal")

    first = compiled.Source(make())
    monkeypatch.setattr(compiled.rtlil, "convert", None)    # a second conversion would fail
    again = compiled.Source(make())
    monkeypatch.undo()
    fresh = make()
    assert again.text == rtlil.convert(fresh, name="top", ports=compiled._ports(fresh),
                                       emit_src=False)
    assert again.path == first.path


def test_a_short_job_runs_on_pysim_where_the_cache_cannot_be_written(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(blocker))      # a file: no folder can be made in it
    chosen = choose_engine("auto", [instrument_pe(_pe())], cycles=engines.SHORT_CYCLES)
    assert isinstance(chosen, PysimEngine)


def test_a_warm_compiled_run_makes_its_instrumented_pe_from_the_cache(monkeypatch):
    """With the RTLIL and the HMM layout cached under the recipe, a compiled run neither
    attaches the HMM nor elaborates it, warns of nothing, and gives what attaching gives."""
    image = np.random.default_rng(3).integers(0, 256, (BASE["height"], BASE["width"]))
    first = run_window_filter(_pe(), image, engine="compiled")     # caches what it needs
    made, make = [], harness.attach

    def refuse(*args, **kwargs):
        raise AssertionError("attached or elaborated")

    monkeypatch.setattr(harness, "attach", lambda *a, **k: made.append(make(*a, **k))
                        or made[-1])
    monkeypatch.setattr(Instrumented, "_assemble", refuse)
    monkeypatch.setattr(HMM, "elaborate", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = run_window_filter(_pe(), image, engine="compiled")
        assert [design.attached for design in made] == [False]
        del made[:]
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, UnusedElaboratable)]
    assert again.engine["name"] == "compiled" and again.engine["cached"]
    assert np.array_equal(again.image, first.image) and again.figures == first.figures
    assert again.figures.hmm == first.figures.hmm


def test_a_design_made_from_the_cache_attaches_its_hmm_when_elaborated(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    fresh = instrument_pe(_pe())
    compiled.Source(fresh)      # caches the RTLIL and the layout
    design = harness._instrument(_pe(), None, "default", {}, from_cache=True)
    assert not design.attached
    assert design.layout.to_json() == fresh.layout.to_json()
    assert recipe.recipe_key(design, "top") == recipe.recipe_key(fresh, "top")
    # Amaranth's simulator elaborates it: the HMM is attached then, and runs as attach()'s.
    image = np.random.default_rng(4).integers(0, 256, (BASE["height"], BASE["width"]))
    run = run_window_filter(design, image, engine="pysim")
    assert design.attached
    reference = run_window_filter(instrument_pe(_pe()), image, engine="pysim")
    assert run.figures == reference.figures and run.figures.hmm == reference.figures.hmm


def test_a_cached_layout_that_does_not_fit_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    compiled.Source(instrument_pe(_pe()))
    manifest, = (tmp_path / "compiled").glob("*.hmm.json")
    # Unreadable: the HMM is attached as usual.
    manifest.write_text("{")
    design = harness._instrument(_pe(), None, "default", {}, from_cache=True)
    assert design.attached
    # Readable, but another HMM's (the minimal probes'): refused once the HMM is attached.
    other = instrument_pe(_pe(), probes="minimal").layout
    manifest.write_text(json.dumps(other.to_json()))
    design = harness._instrument(_pe(), None, "default", {}, from_cache=True)
    assert design.layout == other
    with pytest.raises(RuntimeError, match="another layout than the one given"):
        design.view
