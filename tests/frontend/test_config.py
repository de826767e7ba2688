"""Flags: defaults, the environment variables, checked values, change_flags."""
import pytest

from lowering.config import (Config, ConfigError, UnknownFlagError, config, parse_contexts,
                             parse_flags_string)


def test_defaults():
    c = Config(environ={})
    assert (c.floatX, c.device, c.mode, c.optimizer) == ("float64", "cpu", "FAST_RUN", "fast_run")
    assert (c.profile, c.allow_gc, c.compute_test_value, c.cast_policy) == (False, True, "off", "custom")
    assert c.cache is True and c.cache_dir.endswith("lowering")
    assert c.contexts == "" and c.context_devices() == {}
    assert c.warn_float64 == "ignore" and c.print_active_device is True


def test_theano_flags_are_read():
    c = Config(environ={"THEANO_FLAGS": "mode=FAST_RUN,device=cpu,floatX=float32"})
    assert (c.mode, c.device, c.floatX) == ("FAST_RUN", "cpu", "float32")


def test_lowering_flags_win_over_theano_flags():
    c = Config(environ={"THEANO_FLAGS": "floatX=float32,allow_gc=False",
                        "LOWERING_FLAGS": "floatX=float16"})
    assert c.floatX == "float16" and c.allow_gc is False


def test_seed_flags_with_contexts_and_sections():
    c = Config(environ={"THEANO_FLAGS": "contexts=dev0->cuda0;dev1->cuda1,floatX=float32,"
                                        "gpuarray.preallocate=0.8"})
    assert c.context_devices() == {"dev0": "cuda0", "dev1": "cuda1"}
    assert c.gpuarray.preallocate == 0.8 and c["gpuarray.preallocate"] == 0.8
    c.gpuarray.sync = "true"
    assert c.gpuarray.sync is True


@pytest.mark.parametrize("text, values", [
    ("profile=True,allow_gc=0", {"profile": True, "allow_gc": False}),
    ("optimizer_excluding=fuse:inplace", {"optimizer_excluding": "fuse:inplace"}),
    ("device=cuda0", {"device": "cuda0"}),
    ("device=gpu", {"device": "gpu"}),
    ("compute_test_value=raise", {"compute_test_value": "raise"}),
    ("openmp_elemwise_minsize=10", {"openmp_elemwise_minsize": 10}),
    ("cpu_features=-avx512f:-avx2", {"cpu_features": "-avx512f,-avx2"}),
])
def test_values_are_parsed(text, values):
    c = Config(environ={"LOWERING_FLAGS": text})
    for name, value in values.items():
        assert c[name] == value


def test_cache_dir_expands_the_home_directory():
    c = Config(environ={"LOWERING_FLAGS": "cache_dir=~/x"})
    assert not c.cache_dir.startswith("~")


def test_unknown_flag_in_the_environment_names_the_nearest():
    with pytest.raises(UnknownFlagError, match=r"unknown flag 'floatx' in THEANO_FLAGS; did you "
                                               r"mean floatX"):
        Config(environ={"THEANO_FLAGS": "floatx=float32"})


def test_unknown_flag_as_attribute():
    c = Config(environ={})
    with pytest.raises(AttributeError, match=r"unknown flag 'devce'.*device"):
        c.devce = "cpu"
    with pytest.raises(UnknownFlagError, match="allow_gc"):
        c.allow_gcc
    assert not hasattr(c, "nonsense_flag")


@pytest.mark.parametrize("name, value, allowed", [
    ("floatX", "float16x", "allowed values: float64, float32, float16"),
    ("mode", "FAST", "FAST_RUN, FAST_COMPILE"),
    ("device", "tpu", "cpu, cuda"),
    ("allow_gc", "maybe", "True, False"),
    ("openmp_elemwise_minsize", "many", "integer"),
    ("compute_test_value", "yes", "off, ignore, warn, raise"),
    ("cpu_features", "avx2", "expected LLVM features as \\+name or -name"),
])
def test_bad_values_name_the_allowed_ones(name, value, allowed):
    c = Config(environ={})
    with pytest.raises(ConfigError, match=f"bad value '{value}' for flag {name}.*{allowed}"):
        c[name] = value
    with pytest.raises(ConfigError, match=f"for flag {name} \\(in LOWERING_FLAGS\\)"):
        Config(environ={"LOWERING_FLAGS": f"{name}={value}"})


def test_bad_contexts():
    with pytest.raises(ConfigError, match="expected name->cudaN"):
        parse_contexts("dev0=cuda0")
    with pytest.raises(ConfigError, match="defined twice"):
        parse_contexts("a->cuda0;a->cuda1")
    with pytest.raises(ConfigError, match="contexts"):
        Config(environ={"THEANO_FLAGS": "contexts=dev0->tpu0"})


def test_malformed_flags_string():
    with pytest.raises(ConfigError, match="malformed entry 'floatX' in THEANO_FLAGS"):
        Config(environ={"THEANO_FLAGS": "floatX"})
    assert parse_flags_string(" a = 1 ,, b=2 ") == [("a", "1"), ("b", "2")]


def test_change_flags_sets_and_restores():
    before = config.floatX
    with config.change_flags(floatX="float32", **{"compute_test_value": "warn"}):
        assert config.floatX == "float32" and config.compute_test_value == "warn"
    assert config.floatX == before and config.compute_test_value == "off"
    with pytest.raises(RuntimeError):
        with config.change_flags(floatX="float16"):
            raise RuntimeError
    assert config.floatX == before


def test_change_flags_checks_everything_before_changing_anything():
    before = config.floatX
    with pytest.raises(ConfigError):
        with config.change_flags(floatX="float32", mode="nope"):
            pass  # pragma: no cover
    assert config.floatX == before
    with pytest.raises(UnknownFlagError):
        with config.change_flags(floatx="float32"):
            pass  # pragma: no cover


def test_change_flags_as_decorator_and_with_dotted_names():
    @config.change_flags({"gpuarray.preallocate": 0.5}, floatX="float32")
    def inside():
        return config.floatX, config.gpuarray.preallocate

    assert inside() == ("float32", 0.5)
    assert config.gpuarray.preallocate == 0.0
