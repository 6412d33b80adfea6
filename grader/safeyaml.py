"""YAML for specs and learners' answers files: safe, alias-free, bounded, with line numbers.

``yaml.safe_load`` alone is not enough for a learner's answers file: a
435-byte "billion laughs" document of nested aliases expands to hundreds of
millions of nodes when walked. Aliases are refused outright, depth, size and
(for answers files) the number of values are capped, and every value's line is
kept so errors can say where.

Building a value can fail outside PyYAML's own errors (``2001-13-45`` read as
a date, ``!!int x``, an integer past Python's 4,300-digit limit). Plain text
that only looks like a date or number stays text; any other such failure is a
``YamlProblem`` at the value's line. An integer written with more
than ``MAX_INTEGER_CHARS`` characters is kept as a ``LongInteger`` holding the
text, so a quiz can grade it rather than the parser choke on it.

PyYAML is imported on first use: a cold ``grader grade`` takes its specs
from the cache and usually reads no YAML at all.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from msgspec import Struct

if TYPE_CHECKING:
    from yaml import SafeLoader as _LoaderBase
else:
    _LoaderBase = object  # PyYAML is imported on first use; the mixin meets SafeLoader only in the loader classes

__all__ = ["LongInteger", "YamlProblem", "line_of", "load_yaml", "warm"]

MAX_DEPTH = 64
# Far past any number a quiz asks for, and short enough that the integer can be built and printed
# (a decimal integer this long is 1,000 digits, a hexadecimal one about 1,200: under Python's 4,300).
MAX_INTEGER_CHARS = 1000


class YamlProblem(ValueError):
    """The text is not YAML we accept; ``line`` says where, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class LongInteger(Struct, frozen=True):
    """An integer written with more than ``MAX_INTEGER_CHARS`` characters, kept as its ``text``."""

    text: str

    def __str__(self) -> str:
        return self.text


# What a value with an explicit or implied tag must be, for the sentence that says it is not.
_TAG_MEANS = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "timestamp": "a date",
    "binary": "base64 data",
    "null": "null",
}


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

    class _Loader(_Building, yaml.SafeLoader):
        _depth = 0
        _nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise YamlProblem(
                    "YAML aliases (*name) are not allowed; write the value out", event.start_mark.line + 1
                )
            # Composing is most of the cost of reading: stop at the cap, not after the whole document.
            self._nodes += 1
            if self.max_nodes is not None and self._nodes > self.max_nodes:
                raise YamlProblem(_too_many(self.max_nodes), self.peek_event().start_mark.line + 1)
            # PyYAML composes recursively: stop a deeply nested document before Python's stack does.
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise YamlProblem(
                        f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark.line + 1
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    _Loader.add_constructor("tag:yaml.org,2002:int", _Building.construct_bounded_int)
    _Loader.yaml_implicit_resolvers = {
        key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
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

    class _FastLoader(_Building, base):  # type: ignore[misc, valid-type]
        pass

    _FastLoader.yaml_implicit_resolvers = _loader_class().yaml_implicit_resolvers
    _FastLoader.yaml_constructors = _loader_class().yaml_constructors
    return _FastLoader


class _Building(_LoaderBase):
    """What both loaders share when building values: every failure a ``YamlProblem`` at its line.

    PyYAML's constructors raise ``ValueError``, ``KeyError``, ``IndexError``
    or ``AttributeError`` for scalars that match a tag's pattern but not its
    meaning; those are the document's fault, so they are said as such.
    """

    max_nodes: int | None = None

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        import yaml

        try:
            return super().construct_object(node, deep)
        except (YamlProblem, yaml.YAMLError, RecursionError):
            raise
        except Exception:  # noqa: BLE001 - any other failure comes from the value as written
            if self._looks_like_only(node):
                return node.value
            raise YamlProblem(_not_readable(node), node.start_mark.line + 1) from None

    def _looks_like_only(self, node: Any) -> bool:
        """Whether ``node`` is plain text that merely looks like its type (``2001-13-45``, ``._``): kept as text."""
        import yaml

        return (
            isinstance(node, yaml.ScalarNode)
            and not node.style  # plain: None from PyYAML, "" from libyaml
            and self.resolve(yaml.ScalarNode, node.value, (True, False)) == node.tag
        )

    def construct_bounded_int(self, node: Any) -> Any:
        """An ``int``, or a ``LongInteger`` for one written too long to build (Python refuses or takes long)."""
        import yaml

        text = self.construct_scalar(node)
        if len(text) > MAX_INTEGER_CHARS and _INTEGER.match(text):
            return LongInteger(text)
        return yaml.SafeLoader.construct_yaml_int(self, node)


_INTEGER = re.compile(r"[-+]?(?:0b[0-1_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])*)\Z")


def _not_readable(node: Any) -> str:
    """``'2001-13-45' is not a date``: the value as written (shortened) and what its tag says it must be."""
    tag = str(node.tag).rsplit(":", 1)[-1]
    means = _TAG_MEANS.get(tag, f"a {node.tag} value")
    written = node.value if isinstance(node.value, str) else ""
    shown = repr(written[:40]) + ("..." if len(written) > 40 else "")
    return f"{shown} is not {means}"


def _too_many(max_nodes: int) -> str:
    return f"holds more than {max_nodes} values"


# A learner's answers file is a few hundred bytes. One this short and without an alias (``*``) is read
# by libyaml, ten times faster; its nesting is bounded by its length, so libyaml's recursion stays shallow.
_FAST_MAX_BYTES = 4096


def warm() -> None:
    """Import PyYAML and build the loaders now, for processes about to fork workers that read answers files."""
    _loader_class()
    _fast_loader_class()


def load_yaml(
    text: str, max_bytes: int = 1 << 20, max_nodes: int | None = None
) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Parse one YAML document; return the data and a map from each value's path to its line.

    ``max_nodes`` caps the values (keys, scalars, lists and mappings) a
    document may hold; reading stops at the first one past it.
    """
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise YamlProblem(f"the file is larger than {max_bytes // 1024} KiB")
    import yaml

    if len(text) <= _FAST_MAX_BYTES and "*" not in text:
        read = _read_fast(text, max_nodes)
        if read is not None:
            return read
    try:
        return _read_with(_loader_class(), text, max_nodes)
    except YamlProblem:
        raise
    except RecursionError:
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        said = exc.problem or exc.context
        if exc.context and said and said.startswith("but "):  # "but found another document" needs what was expected
            said = f"{exc.context}, {said}"
        raise YamlProblem(f"not valid YAML: {said}", mark.line + 1 if mark else None) from None
    except yaml.reader.ReaderError as exc:  # raised before parsing starts, so it has a position but no mark
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        said = f"the character U+{exc.character:04X} is not allowed in YAML text"
        raise YamlProblem(f"not valid YAML: {said}", line) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"not valid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def _read_with(loader_class: Any, text: str, max_nodes: int | None) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """``_read`` on a new loader of ``loader_class`` (whose constructor may already refuse the text)."""
    loader = loader_class(text)
    try:
        loader.max_nodes = max_nodes
        return _read(loader)
    finally:
        loader.dispose()


def _read(loader: Any) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """Compose the one document, note each value's line (refusing deep nesting), then build the data."""
    node = loader.get_single_node()
    if node is None:
        return None, {}
    if loader.max_nodes is not None and _count_nodes(node, loader.max_nodes) > loader.max_nodes:
        raise YamlProblem(_too_many(loader.max_nodes))  # libyaml composed it all; the pure-Python loader says where
    lines: dict[tuple[Any, ...], int] = {}
    _walk(node, (), lines, 0)
    return loader.construct_document(node), lines


def _count_nodes(node: Any, limit: int) -> int:
    """How many nodes ``node`` holds, keys included, counting no further than just past ``limit``."""
    import yaml

    count, pending = 0, [node]
    while pending and count <= limit:
        current = pending.pop()
        count += 1
        if isinstance(current, yaml.MappingNode):
            pending.extend(part for pair in current.value for part in pair)
        elif isinstance(current, yaml.SequenceNode):
            pending.extend(current.value)
    return count


def _read_fast(text: str, max_nodes: int | None) -> tuple[Any, dict[tuple[Any, ...], int]] | None:
    """``load_yaml`` with libyaml; ``None`` when it is not there or the text is not accepted (the caller says why)."""
    loader_class = _fast_loader_class()
    if loader_class is None:
        return None
    try:
        return _read_with(loader_class, text, max_nodes)
    except Exception:  # noqa: BLE001 - the pure-Python loader reads it again and gives the usual reason
        return None


def _walk(node: Any, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int], depth: int) -> None:
    import yaml

    if depth > MAX_DEPTH:
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", node.start_mark.line + 1)
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        _refuse_duplicate_keys(node)
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.start_mark.line)
            lines[path + (name,)] = key.start_mark.line + 1
            _walk(value, path + (name,), lines, depth + 1)
            lines[path + (name,)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), lines, depth + 1)


def _refuse_duplicate_keys(node: Any) -> None:
    """A key written twice in one mapping is an error at its second line: YAML would keep only the last value."""
    import yaml

    first: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.value == "<<":
            continue
        where = (key.tag, key.value)
        if where in first:
            raise YamlProblem(
                f"the key {key.value!r} is written twice in one mapping (first on line {first[where]}); keep one",
                key.start_mark.line + 1,
            )
        first[where] = key.start_mark.line + 1


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
