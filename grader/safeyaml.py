"""YAML for specs and learners' answers files: safe, alias-free, bounded, with line numbers.

``yaml.safe_load`` alone is not enough for a learner's answers file: a
435-byte "billion laughs" document of nested aliases expands to hundreds of
millions of nodes when walked. Aliases are refused outright, depth and size
are capped, and every value's line is kept so errors can say where.

PyYAML is imported on first use: a cold ``grader grade`` takes its specs
from the cache and usually reads no YAML at all.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["YamlProblem", "line_of", "load_yaml", "warm"]

MAX_DEPTH = 64


class YamlProblem(ValueError):
    """The text is not YAML we accept; ``line`` says where, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


@functools.lru_cache(maxsize=1)
def _loader_class() -> Any:
    """The alias-refusing, depth-capped loader (built once, when YAML is first read)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise YamlProblem("YAML aliases (*name) are not allowed; write the value out", event.start_mark.line + 1)
            # PyYAML composes recursively: stop a deeply nested document before Python's stack does.
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark.line + 1)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    _Loader.yaml_implicit_resolvers = {key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    for _resolvers in _Loader.yaml_implicit_resolvers.values():
        _resolvers[:] = [(tag, regexp) for tag, regexp in _resolvers if tag != "tag:yaml.org,2002:float"]
    _Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
    return _Loader


@functools.lru_cache(maxsize=1)
def _fast_loader_class() -> Any:
    """The same loader on libyaml's parser, when PyYAML was built with it (``None`` otherwise)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", None)
    if base is None:
        return None

    class _FastLoader(base):  # type: ignore[misc, valid-type]
        pass

    _FastLoader.yaml_implicit_resolvers = _loader_class().yaml_implicit_resolvers
    return _FastLoader


# A learner's answers file is a few hundred bytes. One this short and without an alias (``*``) is read
# by libyaml, ten times faster; its nesting is bounded by its length, so libyaml's recursion stays shallow.
_FAST_MAX_BYTES = 4096


def warm() -> None:
    """Import PyYAML and build the loaders now, for processes about to fork workers that read answers files."""
    _loader_class()
    _fast_loader_class()


def load_yaml(text: str, max_bytes: int = 1 << 20) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Parse one YAML document; return the data and a map from each value's path to its line."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise YamlProblem(f"the file is larger than {max_bytes // 1024} KiB")
    import yaml

    if len(text) <= _FAST_MAX_BYTES and "*" not in text:
        read = _read_fast(text)
        if read is not None:
            return read
    loader = _loader_class()(text)
    try:
        return _read(loader)
    except YamlProblem:
        raise
    except RecursionError:
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise YamlProblem(f"not valid YAML: {exc.problem or exc.context}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _read(loader: Any) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Compose the one document, note each value's line (refusing deep nesting), then build the data."""
    node = loader.get_single_node()
    if node is None:
        return None, {}
    lines: dict[tuple[Any, ...], int] = {}
    _walk(node, (), lines, 0)
    return loader.construct_document(node), lines


def _read_fast(text: str) -> tuple[Any, dict[tuple[Any, ...], int]] | None:
    """``load_yaml`` with libyaml; ``None`` when it is not there or the text is not accepted (the caller says why)."""
    loader_class = _fast_loader_class()
    if loader_class is None:
        return None
    loader = loader_class(text)
    try:
        return _read(loader)
    except Exception:  # noqa: BLE001 - the pure-Python loader reads it again and gives the usual reason
        return None
    finally:
        loader.dispose()


def _walk(node: Any, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int], depth: int) -> None:
    import yaml

    if depth > MAX_DEPTH:
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", node.start_mark.line + 1)
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.start_mark.line)
            lines[path + (name,)] = key.start_mark.line + 1
            _walk(value, path + (name,), lines, depth + 1)
            lines[path + (name,)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), lines, depth + 1)


def line_of(lines: dict[tuple[Any, ...], int], data: Any, loc: tuple[Any, ...]) -> tuple[int | None, str]:
    """The line of the deepest part of ``loc`` present in ``data``, and ``loc`` as ``a[2].b``.

    pydantic locations include union tags that are not keys of the data
    (``checks, 2, sums-to-one, points``); those are skipped.
    """
    path: tuple[Any, ...] = ()
    shown = ""
    current = data
    for part in loc:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and part not in current and part == loc[-1]:
            shown += f".{part}" if shown else part
            continue
        else:
            continue
        path += (part,)
        shown += f"[{part}]" if isinstance(part, int) else (f".{part}" if shown else str(part))
    line = lines.get(path)
    while line is None and path:
        path = path[:-1]
        line = lines.get(path)
    return line, shown
