"""Time left of an index run, from word pieces (what the embedding costs), smoothed.

Files are a poor unit for a plan: one PDF can hold more text than a thousand notes.
Embedding time is nearly proportional to word pieces, so the run counts the word pieces
embedded so far and estimates those still to come from the bytes still to read (word
pieces per byte of the files read so far). The rate is word pieces over seconds, both
exponentially weighted over about `tau_s` (60) seconds, which irons out the steps of batch commits
(256 chunks land at once, some 20 s apart on 2 cores, each batch +-30% in speed with its
texts and the machine's other work) and still follows a lasting change of speed within
a few minutes. The first batch sets the rate outright, so an estimate exists from the
first commit on and has settled by about the third (within the first minute).

No estimate is given before `warmup_s` seconds of embedding and `min_pieces` word
pieces (model load and the first batch would otherwise make it swing wildly).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class EtaFigures:
    pieces_done: int
    pieces_total: int        # estimate while files are still to be read
    pieces_per_s: float      # smoothed; 0 while unknown
    eta_s: float | None      # None while estimating


class PieceEta:
    def __init__(self, *, bytes_total: int, clock: Callable[[], float],
                 tau_s: float = 60.0, warmup_s: float = 8.0, min_pieces: int = 20_000) -> None:
        self.bytes_total = bytes_total
        self.clock = clock
        self.tau_s = tau_s
        self.warmup_s = warmup_s
        self.min_pieces = min_pieces
        self.pieces_done = 0          # embedded (and committed)
        self.pieces_read = 0          # chunked, maybe not yet embedded
        self.bytes_read = 0
        self._start: float | None = None   # first embedding began
        self._last_t = 0.0
        self._last_pieces = 0
        self._rate = 0.0
        self._pieces_w = 0.0
        self._seconds_w = 0.0

    def read(self, nbytes: int, pieces: int) -> None:
        """A file was read and chunked into `pieces` word pieces."""
        self.bytes_read += nbytes
        self.pieces_read += pieces

    def started(self) -> None:
        """The first embedding starts now (time before it is not embedding time)."""
        if self._start is None:
            self._start = self._last_t = self.clock()

    def embedded(self, pieces: int) -> None:
        self.started()
        self.pieces_done += pieces
        now = self.clock()
        dt = now - self._last_t
        if dt <= 0:
            return
        # pieces and seconds are each decayed and summed; their ratio is the rate over
        # about the last tau_s seconds (a mean of per-batch rates would overweight the
        # fast batches)
        decay = math.exp(-dt / self.tau_s)
        self._pieces_w = self._pieces_w * decay + (self.pieces_done - self._last_pieces)
        self._seconds_w = self._seconds_w * decay + dt
        self._rate = self._pieces_w / self._seconds_w
        self._last_t, self._last_pieces = now, self.pieces_done

    def pieces_total(self) -> int:
        if self.bytes_read <= 0:
            return self.pieces_read
        per_byte = self.pieces_read / self.bytes_read
        left = max(0, self.bytes_total - self.bytes_read)
        return self.pieces_read + round(left * per_byte)

    def figures(self) -> EtaFigures:
        total = max(self.pieces_total(), self.pieces_done)
        eta = None
        if (self._start is not None and self._rate > 0 and self.pieces_done >= self.min_pieces
                and self.clock() - self._start >= self.warmup_s):
            eta = (total - self.pieces_done) / self._rate
        return EtaFigures(self.pieces_done, total, self._rate, eta)
