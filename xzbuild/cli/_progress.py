"""How `xzbuild matrix build` shows a run: a live rich display on a terminal, one plain line per variant otherwise,
and the end-of-run table. The pool only reports (``xzbuild.builder.progress.BuildReporter``); this renders."""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any

from xzbuild.builder.progress import BuildReporter
from xzbuild.builder.results import BuildRecord, BuildStatus

_STYLE = {BuildStatus.BUILT: "green", BuildStatus.CACHED: "cyan", BuildStatus.FAILED: "bold red",
          BuildStatus.SKIPPED: "yellow", BuildStatus.DISABLED: "dim"}


class BuildProgress(BuildReporter):
    """Thread-safe renderer of a run's reports on ``stream`` (stderr); the live display runs from ``begin``
    to ``close``."""

    def __init__(self, total: int, jobs: int, stream: IO[str] | None = None, live: bool | None = None) -> None:
        self.total = total
        self.jobs = max(1, jobs)
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.running: dict[str, tuple[str, float]] = {}  # full_name -> (state, since)
        self.done = 0
        self.counts: dict[BuildStatus, int] = dict.fromkeys(BuildStatus, 0)
        self.durations: list[float] = []
        self._live: Any = None

    def waiting(self, message: str) -> None:
        """Another run holds ``--out``: say so, once."""
        self.stream.write(message + "\n")
        self.stream.flush()

    def begin(self) -> None:
        """Start the clock and, on a terminal, the live display."""
        self.started = time.monotonic()
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(console=Console(file=self.stream), refresh_per_second=4, transient=True,
                              get_renderable=self._render)
            self._live.start()

    def start(self, full_name: str) -> None:
        """A variant left the queue."""
        with self.lock:
            self.running[full_name] = ("configuring", time.monotonic())

    def state(self, full_name: str, state: str) -> None:
        """A running variant changed step (building, merging, packaging)."""
        with self.lock:
            since = self.running.get(full_name, ("", time.monotonic()))[1]
            self.running[full_name] = (state, since)

    def finish(self, record: BuildRecord) -> None:
        """A variant is done (any status)."""
        with self.lock:
            self.running.pop(record.full_name, None)
            self.done += 1
            self.counts[record.status] += 1
            if record.status is BuildStatus.BUILT:
                self.durations.append(record.seconds)
            if not self.live:
                detail = f" — {record.reason}" if record.reason and not record.status.ok else ""
                self.stream.write(f"[{self.done:>{len(str(self.total))}}/{self.total}] {record.status:<8} "
                                  f"{record.full_name} ({record.seconds:.1f}s){detail}\n")
                self.stream.flush()

    def eta(self) -> float | None:
        """Seconds left: remaining builds × mean build time / parallel jobs (None before the first build)."""
        if not self.durations:
            return None
        remaining = self.total - self.done
        return remaining * (sum(self.durations) / len(self.durations)) / self.jobs

    def _render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        with self.lock:
            elapsed = time.monotonic() - self.started
            eta = self.eta()
            head = Text(f"{self.done}/{self.total} done  ·  elapsed {elapsed:.0f}s  ·  ETA "
                        f"{'?' if eta is None else f'{eta:.0f}s'}  ·  ")
            for status, n in self.counts.items():
                if n:
                    head.append(f"{status} {n}  ", style=_STYLE[status])
            table = Table(box=None, show_header=True, header_style="bold")
            table.add_column("variant")
            table.add_column("state")
            table.add_column("elapsed", justify="right")
            now = time.monotonic()
            for name, (state, since) in sorted(self.running.items(), key=lambda kv: kv[1][1]):
                table.add_row(name, state, f"{now - since:.0f}s")
        return Group(head, table)

    def close(self) -> None:
        """Stop the live display."""
        if self._live is not None:
            self._live.stop()
            self._live = None


def summary_table(records: list[BuildRecord], stream: IO[str] | None = None) -> None:
    """The end-of-run table (failed variants first, quoting the first compiler error) and a count line."""
    from rich.table import Table

    from xzbuild.cli._console import table_console

    console = table_console(stream or sys.stderr, terminal_width=140)
    interesting = [r for r in records if r.status in (BuildStatus.FAILED, BuildStatus.SKIPPED)]
    built = [r for r in records if r.status is BuildStatus.BUILT]
    if built or interesting:
        table = Table(title="matrix build", show_lines=False)
        for col in ("variant", "target", "status", "time", "app / slot", "reason"):
            table.add_column(col)
        for r in sorted(interesting, key=lambda r: r.full_name) + sorted(built, key=lambda r: r.full_name):
            fit = (f"{r.app_size // 1024}K/{r.app_partition_size // 1024}K"
                   if r.app_size and r.app_partition_size else "")
            table.add_row(r.full_name, r.target, f"[{_STYLE[r.status]}]{r.status}[/]", f"{r.seconds:.1f}s", fit,
                          (r.reason or "") + (f"\n{r.error}" if r.error and r.error != r.reason else ""))
        console.print(table)
    counts = {s: sum(r.status is s for r in records) for s in BuildStatus}
    console.print("  ".join(f"{s}: {n}" for s, n in counts.items() if n) or "nothing to do")
