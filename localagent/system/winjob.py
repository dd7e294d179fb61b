"""A Windows job object that ends every process in it when it is closed (Windows only).

A command starts suspended, joins the job, and only then runs, so whatever it starts
belongs to the job too, even a grandchild that outlives its parent. Closing the job (or
the agent's death, which closes its handles) ends them all. ctypes and psutil (already a
dependency, for the resume) suffice; pywin32 would add a large package for three calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from ctypes import wintypes

import psutil

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
CREATE_SUSPENDED = 0x4
PROCESS_SET_QUOTA_AND_TERMINATE = 0x0100 | 0x0001
KILLED_EXIT_CODE = 1


class BasicLimits(ctypes.Structure):
    """JOBOBJECT_BASIC_LIMIT_INFORMATION."""

    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", wintypes.DWORD),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", wintypes.DWORD),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", wintypes.DWORD),
        ("SchedulingClass", wintypes.DWORD),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in ("Reads", "Writes", "Others", "ReadBytes", "WriteBytes", "OtherBytes")
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def _kernel32() -> ctypes.WinDLL:  # type: ignore[name-defined]
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
    kernel32.SetInformationJobObject.argtypes = [
        wintypes.HANDLE,
        ctypes.c_int,
        ctypes.c_void_p,
        wintypes.DWORD,
    ]
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
    kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
    kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
    kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
    return kernel32


class KillOnCloseJob:
    """One job per command; `None`-safe to use where job objects are refused.

    `available` is False when the job could not be created or the process could not
    join it (an old Windows whose parent job forbids nesting): the caller then relies on
    killing the process tree it watched, as before job objects.
    """

    def __init__(self) -> None:
        self._kernel32 = _kernel32() if sys.platform == "win32" else None
        self._handle: int | None = None
        if self._kernel32 is None:
            return
        handle = self._kernel32.CreateJobObjectW(None, None)
        if not handle:
            return
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not self._kernel32.SetInformationJobObject(
            handle,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.byref(limits),
            ctypes.sizeof(limits),
        ):
            self._kernel32.CloseHandle(handle)
            return
        self._handle = handle

    @property
    def available(self) -> bool:
        return self._handle is not None

    def adopt(self, pid: int) -> bool:
        """Puts a process started with CREATE_SUSPENDED into the job, then lets it run.

        True if it joined the job. It is resumed either way, so a refused job never
        leaves a command frozen.
        """
        joined = False
        if self._kernel32 is not None and self._handle is not None:
            process = self._kernel32.OpenProcess(PROCESS_SET_QUOTA_AND_TERMINATE, False, pid)
            if process:
                joined = bool(self._kernel32.AssignProcessToJobObject(self._handle, process))
                self._kernel32.CloseHandle(process)
        if not joined:
            self.close()
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).resume()
        return joined

    def close(self) -> None:
        """Ends every process in the job, then lets go of it; safe to call twice."""
        handle, self._handle = self._handle, None
        if self._kernel32 is None or handle is None:
            return
        self._kernel32.TerminateJobObject(handle, KILLED_EXIT_CODE)
        self._kernel32.CloseHandle(handle)
