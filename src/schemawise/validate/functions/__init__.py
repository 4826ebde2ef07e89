"""Functions a query may call, per dialect, by allow-list (SECURITY.md L3)."""

from schemawise.validate.functions.calls import Call, find_calls
from schemawise.validate.functions.lists import (
    SYNTAX_MARK,
    FunctionList,
    allowed_functions,
    function_list,
    parse_list,
)
from schemawise.validate.functions.policy import refused_calls

__all__ = [
    "SYNTAX_MARK",
    "Call",
    "FunctionList",
    "allowed_functions",
    "find_calls",
    "function_list",
    "parse_list",
    "refused_calls",
]
