"""Every property a spec may name, as one tagged union on the ``property`` key.

Adding a property: write a ``Check`` subclass with a ``property: Literal[...]``
tag, then list it in ``CHECK_TYPES``. Specs, ``grader schema`` and the error
messages ("did you mean ...?") pick it up from here.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Annotated, TypeAlias, Union

from grader.checks.base import Check
from grader.checks.bridge import (
    EntropyGrows,
    ExpSumsToOne,
    MaskedGetsZero,
    MeanOverBatch,
    TemperatureLimit,
)
from grader.checks.calculus import JacobianShape, MatchesJacobian, SumsToZero, Symmetric
from grader.checks.convergence import ConvergesAtOrder
from grader.checks.experiment import ScattersLikeSamplingError, SpreadShrinks
from grader.checks.float_errors import NoFloatWarnings
from grader.checks.form import ReturnsForm
from grader.checks.general import InRange, Monotone
from grader.checks.guard import RespondsToInput
from grader.checks.identity import Identity
from grader.checks.properties import (
    Finite,
    LeavesInputUnchanged,
    NegInfGetsZero,
    NonNegative,
    OrderPreserving,
    Raises,
    ShapeAndDtype,
    SumsToOne,
    TranslationInvariant,
)
from grader.checks.reference import MatchesReference
from grader.checks.reproducible import ChangesWithArgument, Reproducible
from grader.checks.statistics import FloatTuple, VarianceNear, VarianceTracksDimension
from grader.checks.witness import Witness
from grader.record import Field

__all__ = ["CHECK_TYPES", "CheckSpec", "property_names"]

CHECK_TYPES: tuple[type[Check], ...] = (
    MatchesReference,
    SumsToOne,
    NonNegative,
    Finite,
    OrderPreserving,
    TranslationInvariant,
    LeavesInputUnchanged,
    ShapeAndDtype,
    Raises,
    NegInfGetsZero,
    Witness,
    MatchesJacobian,
    JacobianShape,
    SumsToZero,
    Symmetric,
    ReturnsForm,
    # general properties of any numeric function (grader.checks.general, identity, float_errors)
    InRange,
    Monotone,
    Identity,
    NoFloatWarnings,
    RespondsToInput,
    ConvergesAtOrder,
    # softmax-bridge (grader.checks.bridge, grader.checks.statistics)
    ExpSumsToOne,
    TemperatureLimit,
    EntropyGrows,
    MaskedGetsZero,
    MeanOverBatch,
    FloatTuple,
    VarianceNear,
    VarianceTracksDimension,
    Reproducible,
    ChangesWithArgument,
    ScattersLikeSamplingError,
    SpreadShrinks,
)

if TYPE_CHECKING:
    # A union built from a tuple is not a static type; to a type checker every member is a Check.
    CheckSpec: TypeAlias = Check
else:
    # No `|` spelling for a union of a tuple's members, hence Union.
    CheckSpec = Annotated[Union[CHECK_TYPES], Field(discriminator="property")]  # noqa: UP007


def property_names() -> list[str]:
    """Every property tag, for error messages."""
    return [typing.get_type_hints(cls)["property"].__args__[0] for cls in CHECK_TYPES]
