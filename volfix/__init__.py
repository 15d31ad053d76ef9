"""volfix: find and fix PyTorch code written for the `volatile` era."""
from ._version import __version__
from .api import check_paths, check_source, fix_source
from .settings.config import Config, VolfixConfigError
from .model import Applicability, Diagnostic, Edit, FileResult, Fix, Location
from .run.options import RunOptions

__all__ = [
    "__version__", "check_paths", "check_source", "fix_source", "Config", "VolfixConfigError",
    "Applicability", "Diagnostic", "Edit", "FileResult", "Fix", "Location", "RunOptions",
]
