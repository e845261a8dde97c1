"""train/cli.py: the `train` command's arguments, its config handling and its exit codes
(docs/reliability.md C2: a bad config exits with code 2 and a located message, never a traceback)."""
import os
import subprocess
import sys
import types

import pytest

import train
from train import cli
from train.config import SCHEMA, ConfigError, config_from_dict, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_train(args, cwd):
    """`python -m train ARGS` in a fresh process, with this checkout's packages."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "train", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def fake_loop(monkeypatch):
    """A stand-in train.loop recording fit's calls; `raises` makes fit raise."""
    module = types.ModuleType("train.loop")

    class NonFiniteLossError(RuntimeError):
        pass

    class Preempted(Exception):
        pass

    module.NonFiniteLossError, module.Preempted = NonFiniteLossError, Preempted
    module.calls, module.raises = [], None

    def fit(cfg, *, resume="auto", dry_run=False, eval_only=False):
        module.calls.append((cfg, resume, dry_run, eval_only))
        if module.raises is not None:
            raise module.raises

    module.fit = fit
    monkeypatch.setitem(sys.modules, "train.loop", module)
    monkeypatch.setattr(train, "loop", module, raising=False)
    return module


# ----------------------------------------------------------------------- arguments to overrides

def test_files_and_overrides_are_told_apart_and_flags_become_overrides(tmp_path):
    a = write(tmp_path, "run:\n  seed: 1\n", "a.yaml")
    files, overrides, args = cli.parse_args([a, "data.batch_size=8", "--set", "run.epochs=2", "+model.args.x=1",
                                             "~run.seed", "--seed", "5", "--devices", "2", "--workdir", "null",
                                             "--resume", "never", "--dry-run", "--eval-only"])
    assert files == [a]
    assert overrides == ["data.batch_size=8", "+model.args.x=1", "~run.seed", "run.epochs=2",
                         "run.workdir='null'", "run.seed=5", "run.devices=2"]
    assert (args.resume, args.dry_run, args.eval_only, args.print_config) == ("never", True, True, False)


def test_workdir_flag_keeps_any_directory_name_a_string(tmp_path):
    for name in ("null", "1e3", "it's", "on"):
        _, overrides, _ = cli.parse_args(["--workdir", name])
        assert load_config([], overrides).run.workdir == name


def test_options_and_positionals_intermix(tmp_path):
    a = write(tmp_path, "run:\n  seed: 1\n", "a.yaml")
    files, overrides, _ = cli.parse_args([a, "--set", "run.seed=3", "data.batch_size=4", "--print-config"])
    assert files == [a] and overrides == ["data.batch_size=4", "run.seed=3"]


def test_no_config_file_means_the_bundled_default(monkeypatch, tmp_path):
    files, overrides, _ = cli.parse_args(["run.seed=3"])
    assert files == [os.path.join(ROOT, "configs", "digits_mlp.yaml")] and overrides == ["run.seed=3"]
    monkeypatch.setattr(cli, "DEFAULT_CONFIG", str(tmp_path / "absent.yaml"))
    files, _, _ = cli.parse_args([])
    assert files == []


# ------------------------------------------------------------------------------ --print-config

def test_print_config_round_trips(tmp_path, capsys):
    a = write(tmp_path, "model:\n  args:\n    hidden: [16]\nmetrics: [accuracy, 'top_k:2']\n", "a.yaml")
    assert cli.main([a, "optimizer.learning_rate=3e-4", "--seed", "9", "--print-config"]) == 0
    out = capsys.readouterr().out
    dumped = write(tmp_path, out, "dumped.yaml")
    expected = load_config([a], ["optimizer.learning_rate=3e-4", "run.seed=9"]).to_dict()
    assert load_config([dumped]).to_dict() == expected
    assert expected["optimizer"]["learning_rate"] == 3e-4 and expected["run"]["seed"] == 9


def test_print_config_without_files_shows_the_default_config_or_the_schema_defaults(monkeypatch, tmp_path, capsys):
    assert cli.main(["--print-config"]) == 0
    dumped = write(tmp_path, capsys.readouterr().out, "d.yaml")
    assert load_config([dumped]).model.args == {"hidden": [128, 128]}
    monkeypatch.setattr(cli, "DEFAULT_CONFIG", str(tmp_path / "absent.yaml"))
    assert cli.main(["--print-config"]) == 0
    dumped = write(tmp_path, capsys.readouterr().out, "e.yaml")
    assert load_config([dumped]).to_dict() == config_from_dict({}).to_dict()


# ------------------------------------------------------------------------------------- --help

def test_help_lists_every_key_with_its_default(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: train")
    for field in SCHEMA:
        assert f"{field.path}: {field.describe()} = " in out, field.path
    assert "--print-config" in out and "--resume" in out and "Exit codes" in out


def test_bad_usage_returns_2(capsys):
    assert cli.main(["--no-such-flag"]) == 2
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


# ------------------------------------------------------------------------- fit and exit codes

def test_fit_gets_the_config_and_the_flags(tmp_path, fake_loop):
    a = write(tmp_path, "run:\n  epochs: 2\n", "a.yaml")
    assert cli.main([a, "--resume", "never", "--dry-run", "data.batch_size=8"]) == 0
    [(cfg, resume, dry_run, eval_only)] = fake_loop.calls
    assert cfg.run.epochs == 2 and cfg.data.batch_size == 8 and (resume, dry_run, eval_only) == ("never", True, False)
    assert cli.main([a, "--eval-only"]) == 0
    assert fake_loop.calls[-1][1:] == ("auto", False, True)


def test_a_config_error_exits_2_with_the_message_and_fit_is_not_called(tmp_path, fake_loop, capsys):
    """C2: nothing is built from a bad config."""
    a = write(tmp_path, "data:\n  batch_size: 0\n", "a.yaml")
    assert cli.main([a]) == 2
    assert capsys.readouterr().err == f"{a}:2: data.batch_size: must be >= 1, got 0\n"
    assert fake_loop.calls == []


@pytest.mark.parametrize("error_name,code", [("ConfigError", 2), ("NonFiniteLossError", 3), ("Preempted", 75)])
def test_fit_errors_map_to_exit_codes(fake_loop, capsys, error_name, code):
    cls = ConfigError if error_name == "ConfigError" else getattr(fake_loop, error_name)
    fake_loop.raises = cls("what happened")
    assert cli.main(["run.epochs=1"]) == code
    assert "what happened" in capsys.readouterr().err


def test_other_errors_from_fit_propagate(fake_loop):
    fake_loop.raises = ZeroDivisionError("a bug")
    with pytest.raises(ZeroDivisionError):
        cli.main(["run.epochs=1"])


def test_the_exit_code_map_needs_no_loop_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "train.loop", raising=False)
    assert cli._loop_exit_code(RuntimeError("x")) is None


# ------------------------------------------------------------------- the command, as a process

def test_C2_bad_configs_exit_2_without_a_traceback_in_a_subprocess(tmp_path):
    """C2: `python -m train` on a bad file, a missing file, a bad override: code 2, the located
    message on stderr, no traceback, nothing on stdout."""
    bad = write(tmp_path, "optimizer:\n  learning_rate: 0\n  learning_rate: 1\n", "bad.yaml")
    cases = [
        ([bad], f"{bad}:3: optimizer.learning_rate: duplicate key 'learning_rate' (lines 2 and 3)"),
        (["missing.yaml"], "missing.yaml: no such config file"),
        (["run.seed=-1"], "override 'run.seed=-1': run.seed: must be >= 0, got -1"),
        (["data.batch_sise=3", "--print-config"], "did you mean 'batch_size'?"),
    ]
    for args, message in cases:
        proc = run_train(args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr and proc.stdout == "", (args, proc.stderr)


def test_print_config_and_help_in_a_subprocess(tmp_path):
    proc = run_train(["--print-config", "run.name=from_cli"], cwd=tmp_path)
    assert proc.returncode == 0 and "  name: from_cli\n" in proc.stdout and proc.stderr == ""
    proc = run_train(["--help"], cwd=tmp_path)
    assert proc.returncode == 0 and "data.batch_size: int >= 1 = 32" in proc.stdout


def test_seconds_since_process_start_against_the_parent_clock():
    """A child that sleeps 0.3 s then reads its age reports between 0.3 s and the time the parent
    saw pass from before starting it to after it ended (1/100 s of kernel clock rounding aside)."""
    import time
    code = "import time; time.sleep(0.3); from train.logs import seconds_since_process_start as s; print(s())"
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    wall = time.perf_counter() - t0
    age = float(out.stdout)
    assert 0.3 - 0.02 <= age <= wall + 0.02


def test_a_reader_that_goes_away_does_not_stop_the_run(tmp_path):
    """`train ... | head -1`: the pipe closes after the first line. The run goes on to the end
    (exit 0, its final checkpoint committed, metrics.jsonl complete) with no BrokenPipeError."""
    config = write(tmp_path, "run: {steps: 30, log_every: 1, progress: lines, compilation_cache: false}\n"
                             "data: {name: synthetic_classification, num_train: 60, num_test: 20, input_dim: 4,\n"
                             "       num_classes: 2, batch_size: 10}\n"
                             "model: {preset: mlp, args: {hidden: [8]}}\n"
                             "checkpoint: {every: 100}\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    child = subprocess.Popen([sys.executable, "-m", "train", config, "--workdir", str(tmp_path / "w")], cwd=tmp_path,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.readline()
    child.stdout.close()                      # the reader is gone
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert "BrokenPipe" not in err and "Traceback" not in err, err
    assert os.path.isfile(tmp_path / "w" / "checkpoints" / "30" / "COMMIT")
    steps = [r["step"] for r in map(__import__("json").loads, open(tmp_path / "w" / "metrics.jsonl"))
             if "train/loss" in r]
    assert steps[-1] == 30


def test_tensorboard_logging_does_not_import_torch(tmp_path):
    """tensorboardX imports torch whenever it is installed (~460 MB of resident memory in a
    `train` process that never uses it); the run's logger keeps it out, and torch stays
    importable afterwards. A stand-in `torch` package on the path records each import."""
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import os\nopen(os.environ['TORCH_MARK'], 'a').write('imported\\n')\n"
                                      "Tensor = type('Tensor', (), {})\n")
    mark = tmp_path / "mark"
    code = (f"import sys\nfrom train.logs import RunLogger\n"
            f"log = RunLogger({str(tmp_path / 'w')!r}, total_steps=1, progress='off')\n"
            "log.scalars(1, {'train/loss': 0.5})\nlog.close()\n"
            "assert 'torch' not in sys.modules, 'tensorboardX imported torch'\n"
            "import torch\nprint('ok', torch.Tensor.__name__)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), ROOT]), TORCH_MARK=str(mark))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "Tensor"]
    assert mark.read_text() == "imported\n"    # once: by the explicit import, not by tensorboardX
