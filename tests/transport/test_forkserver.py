"""A `python3 judge.py` forked from the warm interpreter is indistinguishable from one started fresh.

Each probe script is run twice through the real runner: once started the ordinary way
(AGENTV_GATE_FORKSERVER=0) and once forked; exit status, stdout and stderr must be identical.
The probes print what a script can observe of how it was started.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agentv_gate.transport import forkserver, process
from agentv_gate.transport.process import ScriptResult, allow_new_scripts, kill_running_scripts, run_judge

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the warm interpreter is Linux-only")


@pytest.fixture(autouse=True)
def python3_is_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python3` on PATH is this real interpreter, as in an activated virtualenv (judges run with
    the python3 on the user's PATH, which on a developer machine may be a pyenv shim)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

OBSERVE = '''
import json, os, signal, sys
seen = {
    "argv": sys.argv, "name": __name__, "file": __file__, "package": __package__, "spec": repr(__spec__),
    "loader": type(__loader__).__name__, "cached": __cached__, "doc": __doc__,
    "main_is_us": sys.modules["__main__"].__dict__ is globals(),
    "path": sys.path, "cwd": os.getcwd(), "stdin": sys.stdin.read(),
    "env": {k: v for k, v in os.environ.items() if k != "AGENTV_GATE_FORKSERVER"},
    "encodings": [sys.stdin.encoding, sys.stdout.encoding, sys.stderr.encoding],
    "buffering": [sys.stdout.line_buffering, sys.stderr.line_buffering, sys.stdout.isatty()],
    "own_group": os.getpgid(0) == os.getpid(), "umask": os.umask(0o22),
    "signals": {name: str(signal.getsignal(getattr(signal, name)))
                for name in ("SIGINT", "SIGPIPE", "SIGCHLD", "SIGTERM", "SIGHUP")},
    "flags": repr(sys.flags), "executable": sys.executable, "prefix": [sys.prefix, sys.base_prefix],
    "open_fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2)[:-1],
    "modules": sorted(sys.modules), "orig_argv": getattr(sys, "orig_argv", None),
}
print(json.dumps(seen, sort_keys=True, default=str))
'''

PROBES = {
    "observe": OBSERVE,
    "exit_code": "import sys\nprint('bye')\nsys.exit(3)\n",
    "exit_message": "import sys\nsys.exit('judge gave up')\n",
    "uncaught": "import json\n\ndef judge(x):\n    return x['missing']\n\njudge(json.loads('{}'))\n",
    "syntax_error": "print('never'\n",
    "atexit_and_threads": textwrap.dedent("""
        import atexit, sys, threading, time
        atexit.register(lambda: print("atexit ran", flush=True))
        def late():
            time.sleep(0.2)
            print("thread finished")
        threading.Thread(target=late).start()
        print("main done")
        """),
    "unclosed_file": textwrap.dedent("""
        import sys
        handle = open(sys.argv[1], "w")
        handle.write("written but never closed")
        print("ok", end="")
        """),
    "os_exit": "import os, sys\nsys.stdout.write('unflushed')\nos._exit(5)\n",
    "killed": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "keyboard_interrupt": "print('interrupted', flush=True)\nraise KeyboardInterrupt\n",
    "big_output": "import sys\nsys.stdout.write('x' * 3_000_000)\nsys.stderr.write('e' * 70_000)\n",
    "stdin_json": "import json, sys\npayload = json.load(sys.stdin)\nprint(json.dumps({'score': len(payload['answer']) / 10}))\n",
    "imports_beside_it": "import helper\nprint(helper.VALUE)\n",
    # A custom sys.excepthook is what prints an uncaught error, and it may decide the exit status.
    "excepthook_exits_0": textwrap.dedent("""
        import sys
        def hook(kind, value, tb):
            print('{"score": 1.0}')
            sys.exit(0)
        sys.excepthook = hook
        raise RuntimeError("scored by the hook")
        """),
    "excepthook_sees_the_traceback": textwrap.dedent("""
        import sys, traceback
        def hook(kind, value, tb):
            print("".join(traceback.format_exception(value)))
            print(value.__traceback__ is tb, sys.last_value is value, [f.name for f in traceback.extract_tb(tb)])
        sys.excepthook = hook
        def judge():
            raise KeyError("missing")
        judge()
        """),
    "excepthook_fails": textwrap.dedent("""
        import sys
        def hook(kind, value, tb):
            raise ValueError("the hook broke")
        sys.excepthook = hook
        raise RuntimeError("original")
        """),
    "exit_number": "import sys\nprint('exiting', sys.argv[1])\nsys.exit(eval(sys.argv[1]))\n",
    # A writer owned by an imported module, never flushed by the judge: a fresh interpreter
    # flushes it when it tears the module down at exit.
    "helper_writer": "import helper_log\nhelper_log.OUT.write('from the helper module')\nprint('main done')\n",
    # Standard-library modules the warm interpreter itself uses, shadowed as a fresh run allows.
    "shadows_stdlib": textwrap.dedent("""
        import sys
        sys.path.insert(0, "lib")
        import json, selectors, token
        print([getattr(module, "VALUE", "stdlib") for module in (selectors, token, json)])
        """),
    # Objects in reference cycles at exit: a writer the script dropped (its text is lost, fresh), one
    # the script still holds (its text is written), and finalizers that print, seeing the globals.
    "cycle_writer_dropped": textwrap.dedent("""
        import sys
        class Log:
            def __init__(self):
                self.out = open(sys.stdout.fileno(), "w", closefd=False)
                self.me = self
        def judge():
            Log().out.write('{"score": 1.0}')
        judge()
        """),
    "cycle_writer_held": textwrap.dedent("""
        import sys
        class Log:
            def __init__(self):
                self.out = open(sys.stdout.fileno(), "w", closefd=False)
                self.me = self
        log = Log()
        log.out.write('{"score": 1.0}')
        """),
    "cycle_finalizer_held": textwrap.dedent("""
        import sys
        class Judge:
            def __init__(self):
                self.me = self
            def __del__(self):
                sys.stdout.write('{"score": 1.0}')
        judge = Judge()
        """),
    "cycle_finalizer_dropped": textwrap.dedent("""
        import sys
        class Judge:
            def __init__(self):
                self.me = self
            def __del__(self):
                sys.stdout.write('{"score": 1.0}')
        def main():
            Judge()
        main()
        """),
    # `__main__` as the interpreter builds it: its names in their order (`__annotations__` among
    # them though the script annotates nothing), and `__file__` gone once the script is done.
    "main_globals": "print([(name, type(value).__name__) for name, value in globals().items()])\n",
    "globals_at_exit": textwrap.dedent("""
        import atexit
        atexit.register(lambda: print("at exit:", sorted(name for name in globals() if name.startswith("__"))))
        print("running:", sorted(name for name in globals() if name.startswith("__")))
        """),
    # Errors the interpreter reports as unraisable while the script runs on: never its end.
    "unraisable_in_script": textwrap.dedent("""
        import sys, warnings
        warnings.simplefilter("error", ResourceWarning)
        sys.unraisablehook = lambda u: print("unraisable:", repr(u.exc_value), u.exc_traceback.tb_frame.f_code.co_name)
        class Judge:
            def __del__(self):
                raise ValueError("in __del__")
        Judge()
        open(__file__).read()
        print("went on")
        """),
    # The script's frame is the bottom one: nothing of the fork server under it.
    "stack": textwrap.dedent("""
        import sys
        frame, frames = sys._getframe(), 0
        while frame is not None:
            frame, frames = frame.f_back, frames + 1
        print(frames, sys._getframe().f_back, sys.getrecursionlimit())
        """),
    "recursion": textwrap.dedent("""
        def depth(n):
            try:
                return depth(n + 1)
            except RecursionError:
                return n
        print(depth(1))
        """),
}

SIDE_FILES = {
    "helper.py": "VALUE = 'from beside the judge'\n",
    "helper_log.py": "import sys\nOUT = open(sys.stdout.fileno(), 'w', closefd=False)\n",
    "selectors.py": "VALUE = 'selectors beside the judge'\n",
    "token.py": "VALUE = 'token beside the judge'\n",
    "lib/json.py": "VALUE = 'json from lib'\n",
}


def both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe: str,
              extra_args: tuple[str, ...] = ()) -> tuple[ScriptResult, ScriptResult]:
    folder = tmp_path / "judges"
    folder.mkdir(exist_ok=True)
    for name, text in SIDE_FILES.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(text)
    (folder / f"{probe}.py").write_text(PROBES[probe])
    argv = ["python3", f"{probe}.py", *extra_args]
    stdin = '{"answer": "Paris is the capital"}'
    allow_new_scripts()
    monkeypatch.setenv("AGENTV_GATE_FORKSERVER", "0")
    fresh = run_judge(argv, stdin, 20, cwd=folder)
    monkeypatch.delenv("AGENTV_GATE_FORKSERVER")
    forked = run_judge(argv, stdin, 20, cwd=folder)
    return fresh, forked


def outcome(result: ScriptResult) -> tuple[object, ...]:
    return result.exit_code, result.stdout, result.stderr, result.timed_out, result.spawn_error


@pytest.mark.parametrize("probe", sorted(set(PROBES) - {"unclosed_file", "exit_number", "recursion"}))
def test_a_forked_judge_behaves_as_a_fresh_one(probe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, forked = both_ways(tmp_path, monkeypatch, probe)
    assert outcome(forked) == outcome(fresh)


@pytest.mark.parametrize("code", ["-1", "-256", "-2", "-15", "256", "257", "2**40 + 7", "2**64", "True"])
def test_an_exit_code_gives_the_status_a_fresh_interpreter_gives(code: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`sys.exit(-1)` is status 255, never "killed by SIGHUP"; `sys.exit(-256)` is 0."""
    fresh, forked = both_ways(tmp_path, monkeypatch, "exit_number", (code,))
    assert outcome(forked) == outcome(fresh)
    assert forked.exit_code is not None and forked.exit_code >= 0


def test_the_probes_that_differed_once_show_what_a_fresh_run_shows(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons above against both runs going wrong the same way."""
    assert outcome(both_ways(tmp_path, monkeypatch, "excepthook_exits_0")[1])[:2] == (0, '{"score": 1.0}\n')
    assert both_ways(tmp_path, monkeypatch, "helper_writer")[1].stdout == "main done\nfrom the helper module"
    assert both_ways(tmp_path, monkeypatch, "shadows_stdlib")[1].stdout == (
        "['selectors beside the judge', 'token beside the judge', 'json from lib']\n")
    assert both_ways(tmp_path, monkeypatch, "exit_number", ("-1",))[1].exit_code == 255
    assert both_ways(tmp_path, monkeypatch, "stack")[1].stdout.startswith("1 None ")
    assert both_ways(tmp_path, monkeypatch, "unraisable_in_script")[1].stdout.endswith("went on\n")


def test_a_forked_judge_recurses_as_deep_as_a_fresh_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly as deep on Python 3.12+. Before 3.12 the interpreter also counts the C calls that run
    the script after the fork (four on 3.11, five on 3.10) against the limit: a recursion stops
    that much sooner."""
    fresh, forked = both_ways(tmp_path, monkeypatch, "recursion")
    assert fresh.exit_code == forked.exit_code == 0, (fresh, forked)
    shortfall = int(fresh.stdout) - int(forked.stdout)
    assert shortfall == (0 if sys.version_info >= (3, 12) else 4 if sys.version_info >= (3, 11) else 5), shortfall


def test_the_observe_probe_really_ran_forked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: the second run must have come from the warm interpreter."""
    spawned: list[object] = []
    real = forkserver.spawn_warm

    def spy(*args: object, **kw: object) -> object:
        spawned.append(real(*args, **kw))  # type: ignore[arg-type]
        return spawned[-1]

    monkeypatch.setattr("agentv_gate.transport.process.spawn_warm", spy)
    fresh, forked = both_ways(tmp_path, monkeypatch, "observe")
    assert len(spawned) == 2 and spawned[0] is None and isinstance(spawned[1], forkserver.ForkedProcess)
    assert forked.exit_code == 0 and '"own_group": true' in forked.stdout and '"main_is_us": true' in forked.stdout


def test_a_file_the_judge_never_closed_is_still_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, forked = both_ways(tmp_path, monkeypatch, "unclosed_file", (str(tmp_path / "side.txt"),))
    assert outcome(forked) == outcome(fresh)
    assert (tmp_path / "side.txt").read_text() == "written but never closed"


def test_timeout_kills_the_forked_judge_and_its_children(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    folder.mkdir()
    pid_file = tmp_path / "grandchild.pid"
    (folder / "hang.py").write_text(textwrap.dedent(f"""
        import pathlib, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))
        time.sleep(60)
        """))
    allow_new_scripts()
    result = run_judge(["python3", "hang.py"], "", 5.0, cwd=folder)
    assert result.timed_out and result.exit_code is None
    grandchild = int(pid_file.read_text())  # written well within the 5 s, even on a busy machine
    stat = Path(f"/proc/{grandchild}/stat")

    def gone() -> bool:
        try:
            return stat.read_text().split()[2] == "Z"
        except OSError:
            return True

    for _ in range(100):  # SIGKILL is delivered at once; reaping may take a moment
        if gone():
            break
        threading.Event().wait(0.05)
    assert gone(), "the judge's child outlived the timeout"


def test_an_interrupted_run_kills_forked_judges(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    folder.mkdir()
    (folder / "hang.py").write_text("import time\nopen('started', 'w').close()\ntime.sleep(60)\n")
    allow_new_scripts()
    results: list[ScriptResult] = []
    worker = threading.Thread(target=lambda: results.append(run_judge(["python3", "hang.py"], "", 60, cwd=folder)))
    worker.start()
    for _ in range(1000):  # until the judge is running (a first warm interpreter may take a while to start)
        # and the run knows it: the judge can write its marker before its pid is registered (a loaded CI host)
        if (folder / "started").exists() and process._live_groups:
            break
        threading.Event().wait(0.02)
    try:
        assert kill_running_scripts() == 1
        worker.join(10)
    finally:
        allow_new_scripts()
    assert results and results[0].exit_code == -signal.SIGKILL


def test_a_forked_judge_leads_its_own_group_the_moment_its_pid_is_known(tmp_path: Path) -> None:
    """An interrupted run kills each judge by its process group as soon as it knows the pid. The
    pid used to be reported before the judge had a group of its own, and a kill in that moment
    missed it (a few in 500 here, more under load): the judge ran on, its run hung to the timeout."""
    (tmp_path / "hang.py").write_text("import time\ntime.sleep(60)\n")
    env = dict(os.environ)
    missed = 0
    for _ in range(500):
        judge = forkserver.spawn_warm(["python3", "hang.py"], str(tmp_path), env)
        assert judge is not None
        try:
            os.killpg(judge.pid, signal.SIGKILL)
        except ProcessLookupError:
            missed += 1
            os.kill(judge.pid, signal.SIGKILL)
        judge.wait(10)
        for pipe in (judge.stdin, judge.stdout, judge.stderr):
            assert pipe is not None
            pipe.close()
    assert missed == 0


def test_other_commands_and_the_opt_out_start_the_ordinary_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "j.py").write_text("print('hi')\n")
    env = dict(os.environ)
    cwd = str(tmp_path)
    assert forkserver._warm_script(["python3", "j.py"], cwd, env) is not None
    assert forkserver._warm_script([sys.executable, "j.py", "--flag"], cwd, env) == sys.executable
    for argv in (["python3", "-u", "j.py"], ["python3", "-m", "json.tool"], ["python3", "missing.py"],
                 ["node", "j.py"], ["python3"], ["pythonista", "j.py"]):
        assert forkserver._warm_script(argv, cwd, env) is None, argv
    monkeypatch.setenv("AGENTV_GATE_FORKSERVER", "0")
    assert forkserver._warm_script(["python3", "j.py"], cwd, env) is None


def test_a_dead_warm_interpreter_means_ordinary_starts_not_errors(tmp_path: Path) -> None:
    (tmp_path / "j.py").write_text("print('still judged')\n")
    allow_new_scripts()
    assert run_judge(["python3", "j.py"], "", 20, cwd=tmp_path).stdout == "still judged\n"
    for zygote in list(forkserver._zygotes.values()):
        zygote._proc.kill()
        zygote._proc.wait()
    results = [run_judge(["python3", "j.py"], "", 20, cwd=tmp_path) for _ in range(3)]
    assert [(r.exit_code, r.stdout) for r in results] == [(0, "still judged\n")] * 3


def test_judges_in_flight_when_the_warm_interpreter_dies_keep_their_own_outcome(tmp_path: Path) -> None:
    """Killing the warm interpreter does not kill the judges it forked: each keeps its own exit status
    and output (one finishes normally, one dies of its own SIGTERM), and later judges still run."""
    (tmp_path / "go").mkdir()
    gates = {name: tmp_path / "go" / name for name in ("finishes", "dies")}
    for gate in gates.values():
        os.mkfifo(gate)
    (tmp_path / "finishes.py").write_text(f"print(open({str(gates['finishes'])!r}).read())\n")
    (tmp_path / "dies.py").write_text(
        f"import os, signal\nopen({str(gates['dies'])!r}).read()\nos.kill(os.getpid(), signal.SIGTERM)\n")
    (tmp_path / "later.py").write_text("print('judged later')\n")
    allow_new_scripts()
    results: dict[str, ScriptResult] = {}

    def judge(name: str) -> None:
        results[name] = run_judge(["python3", f"{name}.py"], "", 60, cwd=tmp_path)

    workers = [threading.Thread(target=judge, args=(name,)) for name in gates]
    for worker in workers:
        worker.start()
    writers = {name: open(gate, "w") for name, gate in gates.items()}  # returns once each judge runs
    try:
        zygotes = [z for z in forkserver._zygotes.values() if z.alive]
        assert zygotes
        for zygote in zygotes:
            zygote._proc.kill()
            zygote._proc.wait()
    finally:
        for name, writer in writers.items():
            writer.write(f"{name} after the warm interpreter died")
            writer.close()
    for worker in workers:
        worker.join(30)
    assert (results["finishes"].exit_code, results["finishes"].stdout) == (0, "finishes after the warm interpreter died\n")
    assert results["dies"].exit_code == -signal.SIGTERM and results["dies"].failure() == "was killed by SIGTERM"
    later = run_judge(["python3", "later.py"], "", 20, cwd=tmp_path)
    assert (later.exit_code, later.stdout) == (0, "judged later\n")


def test_pythonsafepath_keeps_the_script_folder_off_sys_path_as_it_does_fresh(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    fresh, forked = both_ways(tmp_path, monkeypatch, "observe")
    assert outcome(forked) == outcome(fresh)
    fresh, forked = both_ways(tmp_path, monkeypatch, "imports_beside_it")
    assert outcome(forked) == outcome(fresh) and "ModuleNotFoundError" in forked.stderr


def test_an_interpreter_that_cannot_be_warmed_is_started_the_ordinary_way(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A `python3` on PATH that is not one (an old Python 2, a broken build) fails to start the
    warm interpreter; every judge then runs as an ordinary process, with its own result."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    shutil.copy("/bin/false", fake)  # a real program that exits 1 at once, whatever it is asked
    (tmp_path / "j.py").write_text("print('unused')\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    allow_new_scripts()
    results = [run_judge(["python3", "j.py"], "", 20, cwd=tmp_path) for _ in range(2)]
    assert [(r.exit_code, r.stdout) for r in results] == [(1, "")] * 2
    warm = [z for (python, _, _), z in forkserver._zygotes.items() if python == str(fake)]
    assert warm and not warm[0].alive


def test_a_wrapper_script_python3_is_never_kept_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pyenv or asdf shim changes the environment (and may pick another Python per folder) each
    time it runs; a fork of one warm start would not see that, so such a judge starts afresh."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "python3"
    shim.write_text(f"#!/bin/sh\nSHIM_CWD=$(pwd) exec {sys.executable} \"$@\"\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "j.py").write_text("import os\nprint(os.path.basename(os.environ['SHIM_CWD']))\n")
    allow_new_scripts()
    results = [run_judge(["python3", "j.py"], "", 20, cwd=tmp_path / name) for name in ("a", "b")]
    assert [(r.exit_code, r.stdout) for r in results] == [(0, "a\n"), (0, "b\n")]
    assert not [python for python, _, _ in forkserver._zygotes if python == str(shim)]


def test_per_run_variables_reach_each_judge_but_share_the_warm_interpreters(tmp_path: Path) -> None:
    """A code judge's proxy token differs every case; it must not start a warm interpreter per case."""
    (tmp_path / "token.py").write_text("import os\nprint(os.environ['AGENTV_TARGET_PROXY_TOKEN'], os.getppid())\n")
    allow_new_scripts()
    before = set(forkserver._zygotes)
    sent = [f"token-{n}" for n in range(2 * forkserver.HASH_SEEDS)]
    results = [run_judge(["python3", "token.py"], "", 20, cwd=tmp_path, call_env={"AGENTV_TARGET_PROXY_TOKEN": t})
               for t in sent]
    tokens = [r.stdout.split()[0] for r in results]
    parents = {r.stdout.split()[1] for r in results}
    assert tokens == sent
    assert len(set(forkserver._zygotes) - before) <= forkserver.HASH_SEEDS
    assert len(parents) <= forkserver.HASH_SEEDS and str(os.getpid()) not in parents  # forked, not started by us


HASHES = "import os\nprint(hash('judge'), hash(b'judge'), os.getppid())\n"


def hashes(folder: Path, runs: int) -> list[tuple[str, str]]:
    """(the string and bytes hashes, the parent pid) each of `runs` judges printed, in turn."""
    allow_new_scripts()
    results = [run_judge(["python3", "hashes.py"], "", 20, cwd=folder) for _ in range(runs)]
    assert all(result.exit_code == 0 for result in results), results
    return [(" ".join(result.stdout.split()[:2]), result.stdout.split()[2]) for result in results]


def test_each_forked_judge_draws_its_hash_seed_as_a_fresh_one_does(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh `python3` draws a string hash seed per start: judges that follow one another never
    share one forked either (they come from warm interpreters with seeds of their own)."""
    (tmp_path / "hashes.py").write_text(HASHES)
    monkeypatch.setenv("AGENTV_GATE_FORKSERVER", "0")
    fresh = hashes(tmp_path, 2)
    monkeypatch.delenv("AGENTV_GATE_FORKSERVER")
    forked = hashes(tmp_path, forkserver.HASH_SEEDS + 1)
    assert fresh[0][0] != fresh[1][0]
    assert all(parent != str(os.getpid()) for _, parent in forked)  # forked, not started by us
    assert len({seen for seen, _ in forked[:-1]}) == forkserver.HASH_SEEDS
    assert all(a != b for (a, _), (b, _) in zip(forked[:-1], forked[1:], strict=True))


def test_a_hash_seed_the_environment_sets_is_every_judges_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hashes.py").write_text(HASHES)
    monkeypatch.setenv("PYTHONHASHSEED", "1234")
    monkeypatch.setenv("AGENTV_GATE_FORKSERVER", "0")
    fresh = hashes(tmp_path, 1)
    monkeypatch.delenv("AGENTV_GATE_FORKSERVER")
    forked = hashes(tmp_path, 3)
    assert {seen for seen, _ in forked} == {fresh[0][0]}
    assert len({parent for _, parent in forked}) == 1  # one warm interpreter: a second could not differ


FORK_FAILS = '''
import json, os, socket, sys
sock = socket.socket(fileno=int(sys.argv[1]))
sock.send(json.dumps({"ready": True}).encode())
while True:
    data, ancdata, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(3 * 4))
    if not data:
        break
    for _level, _kind, payload in ancdata:
        for i in range(0, len(payload) - len(payload) % 4, 4):
            os.close(int.from_bytes(payload[i:i + 4], sys.byteorder))
    request = json.loads(data)
    with open(os.environ["FORK_FAILS_LOG"], "a") as log:
        log.write(request["argv"][1] + "\\n")
    sock.send(json.dumps({"id": request["id"], "error": "[Errno 11] Resource temporarily unavailable"}).encode())
'''


def test_a_warm_interpreter_that_cannot_fork_means_the_judge_starts_the_ordinary_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It reports the fork error with no pid: the judge still runs, started as a new process."""
    fake = tmp_path / "fork_fails.py"
    fake.write_text(FORK_FAILS)
    log = tmp_path / "asked.log"
    monkeypatch.setattr(forkserver, "ZYGOTE_PATH", str(fake))
    monkeypatch.setattr(forkserver, "_zygotes", {})
    monkeypatch.setenv("FORK_FAILS_LOG", str(log))
    (tmp_path / "j.py").write_text("import os\nprint('judged by', 'pid', os.getpid() > 0)\n")
    allow_new_scripts()
    try:
        results = [run_judge(["python3", "j.py"], "", 20, cwd=tmp_path) for _ in range(2)]
    finally:
        forkserver.close_all()
    assert [(r.exit_code, r.stdout, r.spawn_error) for r in results] == [(0, "judged by pid True\n", None)] * 2
    assert log.read_text().split() == ["j.py", "j.py"]  # the warm interpreter was asked, and said no
