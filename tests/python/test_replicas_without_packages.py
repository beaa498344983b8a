"""Where mlflow and trackio are not installed (this virtualenv: they live in .venv-replicas),
the package imports, and asking for a replica is refused with an error that names the package
to install, before any run directory is made (docs/contract/remote-sinks.md "MLflow",
"trackio"); a bad setting is named first, whatever is installed."""

import importlib.util

import pytest

import tally


@pytest.mark.parametrize("kw, package", [("mlflow", "mlflow"), ("trackio", "trackio")])
def test_a_replica_without_its_package_is_refused_naming_it(tmp_path, kw, package):
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    settings = {"tracking_uri": "http://127.0.0.1:9"} if kw == "mlflow" else {"project": "p"}
    with pytest.raises(ImportError, match=f"pip install {package}"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", **{kw: settings})
    assert not (tmp_path / "run").exists()
    with pytest.raises(ImportError, match=f"pip install {package}"):
        tally.SummaryWriter(tmp_path / "w", **{kw: settings})
    assert not (tmp_path / "w").exists()
    # logger="mlflow" / "trackio" asks for the same replica, with its default settings.
    with pytest.raises(ImportError, match=f"pip install {package}"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "by-logger", panel="off", logger=kw)
    assert not (tmp_path / "by-logger").exists()


@pytest.mark.parametrize("kw", ["mlflow", "trackio"])
def test_an_unknown_setting_is_named_before_the_package_is_needed(tmp_path, kw):
    with pytest.raises(tally.ConfigError, match=rf"{kw}\['bogus'\]: unknown"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", **{kw: {"bogus": "x"}})
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("tags, culprit", [("group=g", r"mlflow\['tags'\]: expected a dict"), ({"role": 3}, r"mlflow\['tags'\]\['role'\]: expected a string")])
def test_mlflow_tags_must_be_a_dict_of_strings_named_before_anything_is_made(tmp_path, tags, culprit):
    with pytest.raises(tally.ConfigError, match=culprit):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", mlflow={"tags": tags})
    assert not (tmp_path / "run").exists()
