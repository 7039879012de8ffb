"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temp dir, pg_ctl on a free loopback
port, unix socket inside the temp dir; stopped and removed on `stop()`.

Run as root, the cluster belongs to the `postgres` OS user (initdb refuses root): the temp dir is handed to
it and initdb/pg_ctl run through `runuser -u postgres --`. Binaries come from Debian's postgresql package
(/usr/lib/postgresql/<version>/bin); `find_bin()` says where, or None when PostgreSQL is not installed.
`cluster_or_skip()` starts one for a test, or skips the test with the reason when PostgreSQL is not installed.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


def find_bin() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl, or None."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb") if os.access(p, os.X_OK)]
    found = [b for b in found if (b / "pg_ctl").exists()]
    return max(found, key=lambda b: int(b.parent.name) if b.parent.name.isdigit() else 0) if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(kw_only=True)
class Cluster:
    bin: Path
    dir: Path
    port: int
    as_postgres: bool

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> Cluster:
        data, sock = self.dir / "data", self.dir / "sock"
        sock.mkdir()
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
            shutil.chown(sock, "postgres", "postgres")
        r = self._run(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                      "--locale=C", "--no-sync")
        if r.returncode:
            raise RuntimeError(f"initdb failed: {r.stderr.strip()[-500:]}")
        opts = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {sock} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off")
        r = self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "server.log"), "-o", opts,
                      "-w", "-t", "60", "start")
        if r.returncode:
            logf = self.dir / "server.log"
            log = logf.read_text(errors="replace")[-800:] if logf.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {r.stderr.strip()[-300:]} {log}")
        return self

    def stop(self) -> None:
        try:
            if (self.dir / "data" / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def start_cluster(bin_dir: Path | None = None) -> Cluster:
    """Start a fresh cluster (raises RuntimeError with the server's words when it cannot)."""
    b = bin_dir or find_bin()
    if b is None:
        raise RuntimeError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)")
    as_postgres = os.geteuid() == 0
    c = Cluster(bin=b, dir=Path(tempfile.mkdtemp(prefix="tog-pg-")), port=_free_port(), as_postgres=as_postgres)
    try:
        return c.start()
    except BaseException:
        c.stop()
        raise


def cluster_or_skip() -> Cluster:
    """A started cluster; the test skipped with the reason when PostgreSQL is not installed, failed instead when
    TOG_REQUIRE_POSTGRES is set."""
    import pytest

    if find_bin() is None:
        if os.environ.get("TOG_REQUIRE_POSTGRES"):
            pytest.fail("TOG_REQUIRE_POSTGRES is set but PostgreSQL is not installed (`make postgres` installs it)")
        pytest.skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); `make postgres` installs it")
    return start_cluster()
