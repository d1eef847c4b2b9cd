"""The command line, generated from the calculator declarations.

``bigmodel list``; ``bigmodel <calc-id> --<input> VALUE ... [--json]``. Values take unit
suffixes ("175B", "80GiB", "400Gb/s"). A bad value prints one line naming the input on
stderr and exits with status 2.

Text comes in the language of ``--lang en|zh`` (anywhere on the line), else of the
locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: ``zh_CN.UTF-8`` is Chinese), else English;
the JSON's numbers and keys are the same in every language.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from typing import TYPE_CHECKING

from calculators import REGISTRY, import_config, presets
from calculators.core import i18n, units
from calculators.core.i18n import _
from calculators.core.localise import localised
from calculators.core.spec import ValidationError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from calculators.core.calculator import Calculator, Result
    from calculators.core.spec import Param

EXIT_BAD_INPUT = 2


def _default_text(param: Param) -> str:
    if param.default is None:
        return param.placeholder or "none"
    if isinstance(param.default, (int, float)) and not isinstance(param.default, bool):
        return units.format_plain(param.default, param.unit)
    return str(param.default)


def _add_calculator(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], calc: Calculator
) -> None:
    parser = subparsers.add_parser(
        calc.id,
        help=calc.summary,
        description=f"{calc.title}. {calc.summary}",
        epilog=("Sources: " + "; ".join(calc.sources)).replace("%", "%%") if calc.sources else None,
    )
    for param in calc.params:
        flags = [f"--{param.name.replace('_', '-')}"]
        if "_" in param.name:
            flags.append(f"--{param.name}")
        detail = [param.label + ".", param.help]
        if param.kind == "choice":
            detail.append("Choices: " + ", ".join(param.choice_values) + ".")
        elif param.unit and param.unit != "1":
            detail.append(f"Unit: {param.unit}.")
        detail.append(f"Default: {_default_text(param)}.")
        parser.add_argument(
            *flags,
            dest=param.name,
            metavar="VALUE",
            help=" ".join(d for d in detail if d).replace("%", "%%"),
            default=argparse.SUPPRESS,
        )
    offered = presets.presets_for(calc)
    if offered:
        parser.add_argument(
            "--preset", metavar="ID", default=None,
            help="start from a published configuration (explicit inputs override it): "
            + ", ".join(p.id for p in offered) + ". See `bigmodel presets`.",
        )
    if presets.describes_models(calc):
        parser.add_argument(
            "--config", metavar="FILE", default=None,
            help="fill the model inputs from a Hugging Face config.json (explicit inputs "
            "override it; applied over --preset); the fields read go to stderr",
        )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _config_texts(calc: Calculator, path: str) -> dict[str, str]:
    """The inputs a config.json file gives ``calc``; what was read goes to stderr."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(1_000_000)
    except OSError as err:
        raise ValidationError("config", f"cannot read {path}: {err.strerror}") from None
    answer = import_config(calc.id, text)
    print(f"config: {answer['name']}; read {', '.join(answer['used'])}", file=sys.stderr)
    if answer["defaults"]:
        print(f"config: not in the file, the family's defaults: "
              f"{', '.join(answer['defaults'])}", file=sys.stderr)
    return dict(answer["texts"])


LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def language_of(argv: list[str], environ: dict[str, str]) -> tuple[str, list[str]]:
    """The language asked for (``--lang X`` or ``--lang=X`` anywhere, else the locale)
    and the arguments without it. An unknown ``--lang`` is a validation error; an
    unknown locale is English (a machine's locale is not a request)."""
    rest: list[str] = []
    asked: str | None = None
    words = iter(argv)
    for word in words:
        if word == "--lang":
            asked = next(words, "")
        elif word.startswith("--lang="):
            asked = word.split("=", 1)[1]
        else:
            rest.append(word)
    if asked is not None:
        try:
            return i18n.check_language(asked), rest
        except i18n.UnknownLanguageError as err:
            raise ValidationError("lang", str(err)) from None
    for variable in LOCALE_VARIABLES:
        value = environ.get(variable, "")
        if value and value not in ("C", "POSIX"):
            try:
                return i18n.check_language(value.split(".")[0]), rest
            except i18n.UnknownLanguageError:
                return i18n.SOURCE_LANGUAGE, rest
    return i18n.SOURCE_LANGUAGE, rest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bigmodel",
        description=_("Size large-model training: the guide's calculators on the command line."),
    )
    parser.add_argument("--lang", choices=i18n.LANGUAGES,
                        help=_("language of the text (default: the locale, else English)"))
    subparsers = parser.add_subparsers(dest="command", metavar="<calculator>|list")
    subparsers.add_parser("list", help=_("list the calculators"))
    subparsers.add_parser("presets", help=_("list the presets, with their sources"))
    for calc in REGISTRY.values():
        _add_calculator(subparsers, localised(calc, i18n.current_language()))
    return parser


def _columns(text: str) -> int:
    """Terminal columns of ``text``: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _print_human(result: Result) -> None:
    calc = result.calculator
    width = max(_columns(o.label) for o in calc.outputs)
    print(calc.title)
    for out in calc.outputs:
        pad = " " * (width - _columns(out.label))
        print(f"  {out.label}{pad}  {result.text(out.name)}")
    for line in result.computed.warnings:
        print(_("warning: {text}").format(text=line))
    for line in result.computed.notes:
        print(_("note: {text}").format(text=line))
    if result.computed.table is not None:
        table = result.computed.table
        print()
        print("  " + " | ".join(table.columns))
        for row in table.rows:
            print("  " + " | ".join(row))


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        lang, words = language_of(words, dict(os.environ))
    except ValidationError as err:
        print(f"bigmodel: invalid --lang: {err.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    with i18n.language(lang):
        return _run(words)


def _run(argv: list[str]) -> int:
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    args.pop("lang", None)
    command = args.pop("command", None)
    if command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    if command == "list":
        for calc in REGISTRY.values():
            print(f"{calc.id:<22} {localised(calc, i18n.current_language()).summary}")
        return 0
    if command == "presets":
        for preset in presets.PRESETS:
            print(f"{preset.id:<22} {preset.label} ({preset.kind})\n{'':<22} {preset.source}")
        return 0
    as_json = args.pop("json", False)
    preset_id = args.pop("preset", None)
    config_path = args.pop("config", None)
    try:
        calc = localised(REGISTRY[command], i18n.current_language())
        if config_path is not None:
            args = {**_config_texts(calc, config_path), **args}
        if preset_id is not None:
            preset = presets.get(preset_id)
            if preset not in presets.presets_for(calc):
                raise ValidationError("preset", _("{preset} does not apply to {calc}").format(
                    preset=repr(preset_id), calc=calc.id))
            args = {**presets.preset_texts(calc, preset), **args}
        result = calc.compute(args)
    except ValidationError as err:
        print(_("bigmodel {command}: invalid --{flag}: {message}").format(
            command=command, flag=err.input_name.replace("_", "-"), message=err.message),
            file=sys.stderr)
        return EXIT_BAD_INPUT
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_human(result)
    return 0
