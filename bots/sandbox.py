"""Confining the program a bridge runs: bubblewrap (bwrap) and resource limits (prlimit).

The bridge runs an outside author's program on the bridge's host, as the bridge's user. Left
alone it could read whatever that user can: the key file, the server's SQLite store on the
same host, every process's command line under /proc. Confined, it sees a read-only minimal
root (the system's /usr and libraries, a few files of /etc, its own directory and
interpreter), a private /tmp, a /proc of its own PID namespace (its own processes only), and
no network unless asked. Its address space and CPU time are capped with setrlimit (via
util-linux's `prlimit`, so that no Python code runs between fork and exec in the bridge's
threaded process): over the memory limit its allocations fail and it dies, over the CPU
limit the kernel kills it, and the bridge counts a crash as for any program that died.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# what every program may see (read-only), where the host has it
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# the few files of /etc a program's start needs (the loader, time zone, names, certificates)
ETC_ENTRIES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/ssl",
    "/etc/ca-certificates", "/etc/mime.types",
)
# ... and with the network, what name lookups read
NETWORK_ETC = ("/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf")
DEFAULT_MEMORY_MB = 2048  # of address space: Node.js alone reserves about 1 GB at start
CHECK_SECONDS = 10.0


_WORKS: set[Sandbox] = set()  # the settings whose check passed in this process


class SandboxError(Exception):
    """The program cannot be confined on this host: the message says why and what to do."""


@dataclass(frozen=True)
class Sandbox:
    """How a program is started: confined (`enabled`) or not, with limits either way.
    `cpu_seconds` and `memory_mb` 0: no limit. `binds`: more paths it may read; `writable`:
    directories it may also write (what it keeps across its restarts)."""

    enabled: bool = True
    network: bool = False
    cpu_seconds: int = 0
    memory_mb: int = DEFAULT_MEMORY_MB
    binds: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()

    def check(self) -> None:
        """Raises SandboxError unless the tools are there and bwrap can make its namespaces
        here (it starts `true` confined as a program would be; once per setting)."""
        if self in _WORKS:
            return
        self._check()
        _WORKS.add(self)

    def _check(self) -> None:
        if (self.cpu_seconds or self.memory_mb) and shutil.which("prlimit") is None:
            raise SandboxError(
                "prlimit (util-linux) is not installed: it sets --cpu-seconds and --memory-mb; "
                "install util-linux, or pass --cpu-seconds 0 --memory-mb 0")
        if not self.enabled:
            return
        if shutil.which("bwrap") is None:
            raise SandboxError(
                "bubblewrap (bwrap) is not installed: it confines the program (Debian, Ubuntu: "
                "apt-get install bubblewrap); or run with --no-sandbox, and the program sees "
                "whatever this user may read")
        true = shutil.which("true") or "/bin/true"
        try:
            done = subprocess.run(self.command([true]), capture_output=True,
                                  timeout=CHECK_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SandboxError(f"bwrap could not be run: {e}") from None
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip()[-300:] or f"exit {done.returncode}"
            raise SandboxError(
                f"bwrap cannot confine a program on this host ({said}): it needs user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1, or a container "
                "allowing them) or root; or run with --no-sandbox, and the program sees "
                "whatever this user may read")

    def command(self, program: Sequence[str]) -> list[str]:
        """The command line that starts `program` confined and limited."""
        argv = [_absolute(a, first=i == 0) for i, a in enumerate(program)]
        limits = self._limits()
        if not self.enabled:
            return [*limits, *argv]
        return [*limits, *self._bwrap(argv), "--", *argv]

    def visible(self, program: Sequence[str]) -> list[str]:
        """The paths of the host (besides the system's) the confined program may read."""
        argv = [_absolute(a, first=i == 0) for i, a in enumerate(program)]
        paths = {Path(p) for p in _program_dirs(argv)} | {Path(b).resolve() for b in self.binds}
        # a path inside another one is seen through it
        return sorted(str(p) for p in paths if not any(q in p.parents for q in paths))

    def shows(self, program: Sequence[str], path: str) -> bool:
        """Whether the confined program could read `path` (a key file must not be)."""
        if not self.enabled:
            return True
        target = Path(path).resolve()
        shown = (*self.visible(program), *self.written(), *SYSTEM_DIRS)
        return any(_within(target, Path(p)) for p in shown)

    def written(self) -> list[str]:
        """The host's directories the confined program may write."""
        return sorted({str(Path(w).resolve()) for w in self.writable})

    def _limits(self) -> list[str]:
        limits = []
        if self.memory_mb:
            limits.append(f"--as={self.memory_mb * 1024 * 1024}")
        if self.cpu_seconds:
            limits.append(f"--cpu={self.cpu_seconds}")
        return ["prlimit", *limits, "--"] if limits else []

    def _bwrap(self, argv: list[str]) -> list[str]:
        out = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all"]
        if self.network:
            out.append("--share-net")
        # the private /tmp first: a program kept under the host's /tmp is bound over it
        out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for path in SYSTEM_DIRS:
            out += _bind(path)
        for path in (*ETC_ENTRIES, *(NETWORK_ETC if self.network else ())):
            out += _bind(path)
        for path in self.visible(argv):
            out += _bind(path)
        for path in self.written():  # after the read-only ones: it may lie inside one
            out += ["--bind", path, path]
        home = _program_home(argv)
        out += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
                "--chdir", home or "/tmp"]
        return out


def _absolute(arg: str, first: bool) -> str:
    """An argument naming an existing file, as an absolute path (the program starts in its
    own directory, not the bridge's); the command itself looked up on PATH."""
    if first and os.sep not in arg:
        return shutil.which(arg) or arg
    if not arg.startswith("-") and os.path.exists(arg):
        return os.path.abspath(arg)
    return arg


def _program_dirs(argv: Sequence[str]) -> list[str]:
    """The program's own directories: its executable's (as named and as resolved, with the
    installation it belongs to: a virtualenv's or an interpreter's prefix) and those of the
    files among its arguments (its script)."""
    dirs: list[str] = []
    if argv and os.path.isabs(argv[0]):
        for exe in (Path(argv[0]), Path(argv[0]).resolve()):
            dirs.append(str(exe.parent))
            prefix = exe.parent.parent
            if exe.parent.name == "bin" and _installation(prefix):
                dirs.append(str(prefix))
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isfile(arg):
            dirs.append(os.path.dirname(arg))
    return [d for d in dirs if not any(_within(Path(d), Path(s)) for s in SYSTEM_DIRS)]


def _installation(prefix: Path) -> bool:
    """A directory holding an interpreter's installation (not, say, someone's home)."""
    return (prefix / "pyvenv.cfg").is_file() or any(
        (prefix / "lib").glob(pattern) for pattern in ("python3*", "node_modules"))


def _program_home(argv: Sequence[str]) -> str:
    """Where the program starts: its script's directory, else its executable's."""
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isfile(arg):
            return os.path.dirname(arg)
    return ""


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _bind(path: str) -> list[str]:
    """Read-only bind of `path` at the same place (a symbolic link made again as one)."""
    if os.path.islink(path) and os.path.dirname(path) == "/":
        return ["--symlink", os.readlink(path), path]
    if not os.path.exists(path):
        return []
    return ["--ro-bind", path, path]

