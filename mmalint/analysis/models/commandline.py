"""argparse: what a benchmark or example script's options are when it is run as written.

`python bench.py` runs the script's `if __name__ == "__main__":` with no arguments
(`Context.script`): `parser.parse_args()` then gives every option its default, converted by its
`type` as argparse converts a string default, and a required one ends the run (argparse exits).
A list of strings given to `parse_args([...])` is parsed the simple way (`--name value`,
`--name=value`, flags, positionals one each). Whatever is past that (an abbreviated or
clustered option, `nargs`, an action not listed, a parser set up under a branch or handed to
code no model knows, subcommands) leaves the result unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from mmalint.analysis.host import Args, Bound, Call, Diverges, Host, attribute, method, model
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Api,
    ArgParser,
    ClassVal,
    Const,
    Instance,
    Method,
    TupleVal,
    Value,
)

# What `action=` may say: each one's default where none is given, and whether it reads a value.
_ACTIONS = {"store": (NONE, True), "store_true": (Const(False), False),
            "store_false": (Const(True), False), "store_const": (NONE, False)}
_KNOWN_KEYWORDS = frozenset({"action", "default", "type", "choices", "required", "help", "metavar", "dest", "const"})
_CONVERSIONS = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
_NAMESPACE = ClassVal("Namespace", None, (), {})


@dataclass(frozen=True)
class Option:
    """One `add_argument`: its flags (none for a positional), where it stores, and how."""

    flags: tuple[str, ...]
    dest: str
    action: str
    default: Value
    type: Value | None
    choices: Value | None
    required: bool
    const: Value


# `ArgumentParser(...)`'s keywords that change neither the options nor the defaults (`parents`,
# `argument_default`, `prefix_chars`, `fromfile_prefix_chars` do: a parser made with one is not
# read).
_PARSER_KEYWORDS = frozenset({"prog", "usage", "description", "epilog", "formatter_class", "add_help",
                              "allow_abbrev", "exit_on_error", "conflict_handler"})


@model("argparse.ArgumentParser", signature="(...)")
def _parser(host: Host, args: Bound, call: Call) -> Value:
    parser = ArgParser()
    if args.positional or not args.complete or set(args.keywords) - _PARSER_KEYWORDS or (
            "conflict_handler" in args.keywords and args.keywords["conflict_handler"] != Const("error")):
        parser.spoil()
    return parser


@model("argparse.Namespace", signature="(**kwargs)")
def _namespace(host: Host, args: Bound, call: Call) -> Value:
    if not args.complete or args.positional:
        return UNKNOWN
    return Instance(_NAMESPACE, dict(args.keywords))


@attribute(ArgParser)
def _parser_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    return Method(value, attr)


@method(ArgParser, "add_argument", signature="(*flags, **kwargs)")
def _add_argument(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    assert isinstance(parser, ArgParser)
    option = _option(args) if host.surely_running() else None
    if option is not None and any(flag in o.flags for o in parser.options for flag in option.flags):
        option = None  # argparse: "conflicting option string", the script ends there
    if option is None:
        parser.spoil()
    else:
        parser.options.append(option)
    return UNKNOWN  # the Action object: nothing reads it here


@method(ArgParser, "add_argument_group", signature="(...)")
def _group(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    return parser  # its options are the parser's


@method(ArgParser, "set_defaults", signature="(**kwargs)")
def _set_defaults(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    assert isinstance(parser, ArgParser)
    if args.positional or not args.complete or not host.surely_running():
        parser.spoil()
    else:
        parser.defaults.update(args.keywords)  # over every option's own default, as argparse
    return NONE


@method(ArgParser, "parse_args", signature="(args=None, namespace=None)")
def _parse_args(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    assert isinstance(parser, ArgParser)
    found = _parse(host, parser, args, call)
    return Instance(_NAMESPACE, found) if found is not None else UNKNOWN


@method(ArgParser, "parse_known_args", signature="(args=None, namespace=None)")
def _parse_known_args(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    assert isinstance(parser, ArgParser)
    found = _parse(host, parser, args, call)
    return TupleVal((Instance(_NAMESPACE, found), TupleVal((), is_list=True))) if found is not None else UNKNOWN


@method(ArgParser, signature="(...)", prefix="")
def _other(host: Host, parser: Value, args: Bound, call: Call) -> Value:
    """Any other method (`add_subparsers`, `add_mutually_exclusive_group`, `error`...)."""
    assert isinstance(parser, ArgParser)
    parser.spoil()
    return UNKNOWN


def _option(args: Bound) -> Option | None:
    """The option an `add_argument` call adds, or None where it is past what is modelled."""
    if not args.complete or not args.positional or set(args.keywords) - _KNOWN_KEYWORDS:
        return None
    flags = [f.value for f in args.positional if isinstance(f, Const) and isinstance(f.value, str)]
    if len(flags) != len(args.positional) or not all(flags):
        return None
    action = args.keywords.get("action", Const("store"))
    if not isinstance(action, Const) or action.value not in _ACTIONS:
        return None
    implied, reads = _ACTIONS[action.value]
    if (not reads and {"type", "choices"} & set(args.keywords)) or (action.value != "store_const" and "const" in args.keywords):
        return None  # argparse: TypeError when the option is added
    required = args.keywords.get("required", Const(False))
    dest = args.keywords.get("dest")
    if not isinstance(required, Const) or (dest is not None and not (isinstance(dest, Const) and isinstance(dest.value, str))):
        return None
    if not flags[0].startswith("-"):  # a positional: one string each
        if len(flags) != 1 or dest is not None or not reads or "required" in args.keywords:
            return None
        return Option((), flags[0], str(action.value), args.keywords.get("default", implied),
                      args.keywords.get("type"), args.keywords.get("choices"), True, NONE)
    if not all(f.startswith("-") and len(f) > 1 for f in flags):
        return None
    long = [f for f in flags if f.startswith("--")]
    name = dest.value if dest is not None else (long[0][2:] if long else flags[0][1:]).replace("-", "_")
    return Option(tuple(flags), name, str(action.value), args.keywords.get("default", implied),
                  args.keywords.get("type") if reads else None, args.keywords.get("choices") if reads else None,
                  bool(required.value), args.keywords.get("const", NONE))


def _argv(host: Host, given: Value, call: Call) -> list[str] | None:
    """The arguments parsed: a list of constant strings as given, or `sys.argv[1:]` (the
    interpreter's: a script run as written has none); None otherwise."""
    if given == NONE:
        argv = host.getattr(Api("sys", True), "argv", call.node)
        given = TupleVal(argv.items[1:], is_list=True) if isinstance(argv, TupleVal) and argv.items else UNKNOWN
    if isinstance(given, TupleVal) and all(isinstance(v, Const) and isinstance(v.value, str) for v in given.items):
        return [v.value for v in given.items if isinstance(v, Const)]
    return None


def _parse(host: Host, parser: ArgParser, args: Bound, call: Call) -> dict[str, Value] | None:
    """What `parse_args` stores, by dest; None where not known. Where argparse would exit (an
    option not known, a required one missing, a value not of its choices), the path ends."""
    argv = _argv(host, args["args"], call)
    if not parser.untouched or argv is None or args["namespace"] != NONE or not args.complete:
        return None
    by_flag = {flag: option for option in parser.options for flag in option.flags}
    positionals = [option for option in parser.options if not option.flags]
    given: dict[str, Value] = {}
    tokens = iter(argv)
    for token in tokens:
        if token.startswith("-") and token != "-" and not _is_number(token):
            flag, equals, text = token.partition("=")
            option = by_flag.get(flag)
            if option is None or flag == "--":
                return None  # an abbreviation, a cluster of short flags, `--`: not read here
            if option.action != "store":
                if equals:
                    raise Diverges  # argparse: "ignored explicit argument"
                given[option.dest] = option.const if option.action == "store_const" else Const(option.action == "store_true")
                continue
            if not equals:
                text = next(tokens, None)  # type: ignore[assignment]
                if text is None or (text.startswith("-") and not _is_number(text)):
                    raise Diverges  # argparse: "expected one argument"
            given[option.dest] = _value(host, option, text, call)
        else:
            if not positionals:
                raise Diverges  # argparse: "unrecognized arguments"
            option = positionals.pop(0)
            given[option.dest] = _value(host, option, token, call)
    found: dict[str, Value] = {}
    for option in parser.options:
        if option.dest in given:
            found[option.dest] = given[option.dest]
            continue
        if option.required:
            raise Diverges  # argparse: "the following arguments are required"
        if option.dest in parser.defaults:
            found[option.dest] = parser.defaults[option.dest]
            continue
        default = option.default
        if option.type is not None and isinstance(default, Const) and isinstance(default.value, str):
            default = _converted(host, option.type, default, call)  # argparse converts a string default
        found.setdefault(option.dest, default)
    for dest, value in parser.defaults.items():
        found.setdefault(dest, value)
    return found


def _value(host: Host, option: Option, text: str, call: Call) -> Value:
    """An option's string from the command line, converted by its `type` and checked against its
    `choices` as argparse does."""
    value = _converted(host, option.type, Const(text), call) if option.type is not None else Const(text)
    choices = host.iterate(option.choices) if option.choices is not None else None
    if (choices is not None and isinstance(value, Const) and all(isinstance(c, Const) for c in choices)
            and not any(isinstance(c, Const) and c.value == value.value for c in choices)):
        raise Diverges  # argparse: "invalid choice"
    return value


def _converted(host: Host, kind: Value, text: Const, call: Call) -> Value:
    if isinstance(kind, Api) and kind.name in _CONVERSIONS:
        try:
            return Const(_CONVERSIONS[kind.name](text.value))
        except ValueError:
            raise Diverges from None  # argparse: "invalid int value"
    return host.call_value(kind, Args([text], {}, [None], {}), call.node, call.frame, call.block)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
