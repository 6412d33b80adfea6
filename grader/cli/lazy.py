"""Subcommands whose modules are imported only when a command line names them.

A cold ``grader grade`` builds the whole click group before it parses a word;
the instructor's commands (batch, export, authoring) would otherwise be
imported and built on every run, though a learner's grade never uses them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

__all__ = ["LazyCommands"]


class LazyCommands(MutableMapping[str, click.Command]):
    """A click group's commands: those added as usual, and those named by ``"module:attribute"`` until first read.

    click reads a group's commands only through this mapping (``get`` to
    dispatch, iteration to list them), so help, completion and dispatch see
    every command, loaded or not.
    """

    def __init__(self, lazy: dict[str, str]) -> None:
        self._loaded: dict[str, click.Command] = {}
        self._lazy = dict(lazy)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded and name in self._lazy:
            module, _, attribute = self._lazy[name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if command.name != name:  # a renamed command would be listed under one name and run under another
                raise RuntimeError(f"{module}:{attribute} is the command {command.name!r}, not {name!r}")
            self._loaded[name] = command
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._lazy.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._loaded and name not in self._lazy:
            raise KeyError(name)
        self._lazy.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        # A list made first: reading a command while iterating (``values()``) loads it into ``_loaded``.
        return iter([*self._loaded, *(name for name in self._lazy if name not in self._loaded)])

    def __len__(self) -> int:
        return len(self._loaded.keys() | self._lazy.keys())
