"""One run spread over several machines through pytest-xdist's own execnet gateways (issue 18).

Two execnet socket servers on 127.0.0.1, each in its own working directory (standing in for two hosts with
their own disks), run two claims of a few seconds (M0, and R2, which draws a figure); the project travels by ``--rsyncdir``. Every record, figures
included, must come back to the controller: the merged results.json equals a serial run's (verdicts, metrics,
figure count) and every figure is in the controller's report dir, which no worker wrote to.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import execnet
import pytest

from tests.conftest import REPO, run_pytest

CLAIMS = ["claims/test_m0_model_checks.py", "claims/test_r2_saturation_check.py"]
IGNORE = [".venv", ".git", "reports", "tests", "docs", "benchmarks", "__pycache__", "*.egg-info", ".gl", ".whl"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"execnet socket server on port {port} did not start")


@pytest.fixture
def two_hosts(tmp_path):
    """Two execnet socket servers (loop mode), each in its own directory; stopped after the test."""
    script = Path(execnet.__file__).parent / "script" / "socketserver.py"
    procs, specs = [], []
    for name in ("host_a", "host_b"):
        home = tmp_path / name
        home.mkdir()
        port = _free_port()
        procs.append(subprocess.Popen([sys.executable, str(script), f"127.0.0.1:{port}"], cwd=home,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_listening(port)
        specs.append((f"socket=127.0.0.1:{port}", home))
    yield specs
    for p in procs:
        p.kill()
        p.wait(timeout=10)


def test_a_run_over_two_socket_workers_equals_a_serial_run(tmp_path, two_hosts):
    common = [*(str(REPO / c) for c in CLAIMS), "--device", "cpu"]   # absolute: xdist maps them to the rsync root
    serial = run_pytest(REPO, *common, "--report-dir", str(tmp_path / "serial"), timeout=600)
    assert serial.returncode == 0, serial.stdout[-3000:]
    # options as one token each (--opt=value): xdist maps every argument that names an existing path to the rsync root
    tx = [f"--tx={spec}" for spec, _ in two_hosts]
    ignores = [f"--rsyncignore={pattern}" for pattern in IGNORE]
    remote = run_pytest(REPO, *common, f"--report-dir={tmp_path / 'remote'}", "-d", *tx, f"--rsyncdir={REPO}",
                        *ignores, timeout=600)
    assert remote.returncode == 0, remote.stdout[-3000:] + remote.stderr[-3000:]

    a = json.loads((tmp_path / "serial" / "results.json").read_text())["claims"]
    b = json.loads((tmp_path / "remote" / "results.json").read_text())["claims"]
    assert list(a) == list(b) == ["R2", "M0"]
    for cid in a:
        assert b[cid]["verdict"] == a[cid]["verdict"], cid
        assert b[cid]["metrics"] == a[cid]["metrics"], cid
        assert b[cid]["figures"] == a[cid]["figures"], cid
    figures = [f for c in b.values() for f in c["figures"]]
    assert figures, "the claims drew no figure: the test would not show that figures travel"
    for rel in figures:
        assert (tmp_path / "remote" / rel).is_file(), rel                     # shipped back to the controller
    for _, home in two_hosts:                                                 # the hosts ran the claims
        assert any(home.rglob("test_m0_model_checks.py")) or any(home.rglob("test_r2_saturation_check.py"))
        assert not list(home.rglob("results.json"))                            # only the controller writes
