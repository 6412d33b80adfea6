"""``similarity.html``: the pairs ``similarity.find_similar`` lists, with their shared passages side by side.

For the instructor only; the page says first that it is evidence to look
at, not a verdict. Learner names and code are untrusted text: everything
is escaped, and the page runs no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from grader.batch.similarity import GRAM, Similarity, SimilarPair, find_similar
from grader.batch.similarity_inputs import learner_code, wrong_outputs
from grader.results import Report

__all__ = ["PAGE", "format_similarity_html", "similarity_page"]

PAGE = "similarity.html"
_BLOCK_LINES = 60  # of one block; a longer one is cut, with a line saying so
_CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; color: #1b1b1b; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2.5rem; } h3 { font-size: 1rem; }
.warning { background: #fff4e5; border-left: 4px solid #d9822b; padding: .5rem .75rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; margin-top: 1rem; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
td.side { width: 50%; }
pre { margin: 0; font-size: .8rem; white-space: pre-wrap; word-break: break-all; }
.where { color: #666; font-size: .8rem; }
"""


def format_similarity_html(found: Similarity, code: Mapping[str, Mapping[str, str]], *, title: str) -> str:
    """The whole page: the warning, how pairs are scored, the ranked table, then each pair's evidence."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        _CSP,
        f"<title>Similar work: {escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Similar work: {escape(title)}</h1>",
        '<p class="warning"><strong>Evidence to look at, not a verdict.</strong> Learners can write alike '
        "honestly, above all on short exercises, and a copy can be disguised beyond what this finds. A pair is "
        "listed because the two submissions share code or wrong answers that few others in the class share; "
        "read the passages before drawing any conclusion. This page changes no grade, and nothing of it is "
        "written into any learner's feedback or result.</p>",
        _method(found),
        _ranking(found.pairs),
        *(_pair_section(number, pair, code) for number, pair in enumerate(found.pairs, start=1)),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _method(found: Similarity) -> str:
    return (
        "<h2>How pairs are found</h2><p>"
        f"{found.learners} learners. Each learner's code is read as tokens with the names they chose, numbers, "
        "strings, comments, docstrings, layout and the order of top-level functions set aside, and the "
        "handout's stubs and scaffold left out. A fingerprint is a run of "
        f"{GRAM} such tokens (about a line). Only fingerprints and wrong outputs (the same wrong value at the "
        f"same hidden input) that at most {found.rare_limit} learners share count, each weighed by how rare it "
        "is in the class, so long stretches of rare code in common score high and a short solution many "
        f"wrote the same way scores low. {found.candidate_pairs} pairs shared something rare; the "
        f"{len(found.pairs)} with most in common are listed.</p>"
    )


def _ranking(pairs: list[SimilarPair]) -> str:
    if not pairs:
        return "<h2>Pairs</h2><p>No pair of learners shares enough rare code or wrong outputs to list.</p>"
    rows = [
        "<h2>Pairs</h2><table><tr><th>#</th><th>learner</th><th>learner</th><th>score</th>"
        "<th>rare fingerprints in common</th><th>share of each one's fingerprints</th>"
        "<th>rare wrong outputs in common</th></tr>"
    ]
    for number, pair in enumerate(pairs, start=1):
        rows.append(
            f'<tr><td class="num"><a href="#pair-{number}">{number}</a></td><td>{escape(pair.first)}</td>'
            f'<td>{escape(pair.second)}</td><td class="num">{pair.score:.1f}</td>'
            f'<td class="num">{pair.shared_fingerprints}</td>'
            f'<td class="num">{pair.first_share:.0%} / {pair.second_share:.0%}</td>'
            f'<td class="num">{len(pair.outputs)}</td></tr>'
        )
    return "".join(rows) + "</table>"


def _pair_section(number: int, pair: SimilarPair, code: Mapping[str, Mapping[str, str]]) -> str:
    first, second = escape(pair.first), escape(pair.second)
    parts = [
        f'<h2 id="pair-{number}">{number}. {first} and {second}</h2>',
        f"<p>Score {pair.score:.1f}: {pair.code_score:.1f} from code, {pair.output_score:.1f} from wrong outputs.</p>",
    ]
    if pair.outputs:
        parts.append("<h3>The same wrong output at the same hidden input</h3><ul>")
        for shared in pair.outputs:
            out = shared.output
            parts.append(
                f"<li>{escape(out.exercise)} / {escape(out.check)}: {escape(out.input)} gave "
                f"<code>{escape(out.got)}</code> (given by {shared.holders} learners in the class)</li>"
            )
        parts.append("</ul>")
    if pair.passages:
        parts.append(f"<h3>Code in common</h3><table><tr><th>{first}</th><th>{second}</th></tr>")
        for passage in pair.passages:
            parts.append(
                f'<tr><td class="side">{_side(passage.first, code.get(pair.first, {}))}</td>'
                f'<td class="side">{_side(passage.second, code.get(pair.second, {}))}</td></tr>'
            )
        parts.append("</table>")
    elif pair.shared_fingerprints:
        parts.append("<p>The code in common is spread in runs too short to show as passages.</p>")
    return "\n".join(parts)


def _side(blocks: tuple[tuple[str, int, int], ...], files: Mapping[str, str]) -> str:
    """One side of a passage: each block's lines with their file and line numbers."""
    shown = []
    for file, low, high in blocks:
        lines = files.get(file, "").splitlines()
        cut = min(high, low + _BLOCK_LINES - 1)
        body = "\n".join(f"{number:4d}  {lines[number - 1]}" for number in range(low, cut + 1) if number <= len(lines))
        more = f"\n      ... ({high - cut} more lines)" if cut < high else ""
        shown.append(f'<div class="where">{escape(file)}, lines {low}-{high}</div><pre>{escape(body + more)}</pre>')
    return "".join(shown)


def similarity_page(
    code_paths: Mapping[str, Path], reports: Mapping[str, Report], *, boilerplate: Sequence[str], title: str
) -> tuple[str, int]:
    """The page for a graded class, and how many pairs it lists: each learner's code read again from their files.

    ``reports``: each learner's result, read for wrong outputs only.
    """
    code = {name: learner_code(path) for name, path in sorted(code_paths.items())}
    outputs = {name: wrong_outputs(report) for name, report in reports.items()}
    found = find_similar(code, boilerplate=boilerplate, outputs=outputs)
    return format_similarity_html(found, code, title=title), len(found.pairs)
