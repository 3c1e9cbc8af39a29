"""The one place that limits concurrent LLM work: a fair, bounded line in front of the model.

The embedded llama.cpp server decodes one request at a time; more requests at once only split its speed,
and callers left to pile up in its own queue wait blindly until their timeouts. :class:`LLMQueue` lets
``slots`` answers use the model at once, keeps up to ``max_waiting`` more in line (first come, first
served: a freed slot is handed to the head of the line), and turns the next one away at once with
:class:`~rag.errors.BusyError` and a fair guess of when to retry. A waiting caller can read its position
and the time waited, which the UI shows and the HTTP stream sends as keep-alive comments. Extractive
answers and searches never enter it.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rag.errors import BusyError

_FIRST_GUESS = 10.0  # seconds an LLM answer holds a slot, until one has been measured


class Ticket:
    """A place in the line; holds a slot once granted. Release it exactly once (``with`` does)."""

    def __init__(self, queue: LLMQueue, granted: bool) -> None:
        self._queue = queue
        self.granted = granted
        self.joined = time.monotonic()
        self.granted_at: float | None = self.joined if granted else None
        self.released = False

    @property
    def position(self) -> int:
        """Place in line: 1 is next; 0 once it holds a slot."""
        return self._queue._position(self)

    @property
    def waited(self) -> float:
        """Seconds between joining the line and getting a slot (or now, while still waiting)."""
        end = self.granted_at if self.granted_at is not None else time.monotonic()
        return end - self.joined

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a slot is granted (True) or ``timeout`` seconds pass or the ticket is released (False)."""
        return self._queue._wait(self, timeout)

    def release(self) -> None:
        """Give the slot back (to the head of the line), or leave the line. Idempotent."""
        self._queue._release(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class LLMQueue:
    """``slots`` LLM answers at once, ``max_waiting`` more in line, first come first served."""

    def __init__(self, slots: int = 1, max_waiting: int = 24) -> None:
        if slots < 1 or max_waiting < 0:
            raise ValueError(f"slots must be >= 1 and max_waiting >= 0 (got {slots}, {max_waiting})")
        self.slots = slots
        self.max_waiting = max_waiting
        self._cond = threading.Condition()
        self._active = 0
        self._line: collections.deque[Ticket] = collections.deque()
        self._held: collections.deque[float] = collections.deque(maxlen=20)  # recent slot hold times, s

    @property
    def active(self) -> int:
        """Slots in use."""
        return self._active

    @property
    def waiting(self) -> int:
        """Questions in line."""
        return len(self._line)

    def expected_wait(self, position: int) -> float:
        """Seconds until the question at ``position`` in line gets a slot, judging by recent answers."""
        per_answer = sum(self._held) / len(self._held) if self._held else _FIRST_GUESS
        return per_answer * max(1, position) / self.slots

    def enter(self) -> Ticket:
        """A slot now, or a place in line; :class:`BusyError` when the line is full."""
        with self._cond:
            if self._active < self.slots and not self._line:
                self._active += 1
                return Ticket(self, granted=True)
            if len(self._line) >= self.max_waiting:
                wait = self.expected_wait(len(self._line) + 1)
                raise BusyError(
                    f"The LLM is busy: {self._active} answer(s) being written and {len(self._line)} question(s) "
                    f"waiting, the most allowed (RAG_LLM__MAX_WAITING). Ask again in about {wait:.0f} s, or ask "
                    "for an extractive answer, which needs no LLM.",
                    retry_after=wait,
                )
            ticket = Ticket(self, granted=False)
            self._line.append(ticket)
            return ticket

    @contextmanager
    def slot(self) -> Iterator[Ticket]:
        """Hold a slot for the block, waiting in line for it (:class:`BusyError` when the line is full)."""
        ticket = self.enter()
        try:
            ticket.wait()
            yield ticket
        finally:
            ticket.release()

    def _position(self, ticket: Ticket) -> int:
        with self._cond:
            if ticket.granted:
                return 0
            try:
                return self._line.index(ticket) + 1
            except ValueError:  # released without a slot
                return 0

    def _wait(self, ticket: Ticket, timeout: float | None) -> bool:
        with self._cond:  # a ticket released while it waits (a stopped stream) stops waiting at once
            self._cond.wait_for(lambda: ticket.granted or ticket.released, timeout)
            return ticket.granted

    def _release(self, ticket: Ticket) -> None:
        with self._cond:
            if ticket.released:
                return
            ticket.released = True
            if not ticket.granted:
                self._line.remove(ticket)
                self._cond.notify_all()
                return
            if ticket.granted_at is not None:
                self._held.append(time.monotonic() - ticket.granted_at)
            if self._line:  # hand the slot over: the head of the line goes next, whoever wakes first
                head = self._line.popleft()
                head.granted, head.granted_at = True, time.monotonic()
                self._cond.notify_all()
            else:
                self._active -= 1
