"""The command line, generated from the calculator declarations.

``bigmodel list``; ``bigmodel <calc-id> --<input> VALUE ... [--json]``. Values take unit
suffixes ("175B", "80GiB", "400Gb/s"). A bad value prints one line naming the input on
stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from calculators import REGISTRY, import_config, presets
from calculators.core import units
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bigmodel",
        description="Size large-model training: the guide's calculators on the command line.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="<calculator>|list")
    subparsers.add_parser("list", help="list the calculators")
    subparsers.add_parser("presets", help="list the presets, with their sources")
    for calc in REGISTRY.values():
        _add_calculator(subparsers, calc)
    return parser


def _print_human(result: Result) -> None:
    calc = result.calculator
    width = max(len(o.label) for o in calc.outputs)
    print(calc.title)
    for out in calc.outputs:
        print(f"  {out.label:<{width}}  {result.text(out.name)}")
    for line in result.computed.warnings:
        print(f"warning: {line}")
    for line in result.computed.notes:
        print(f"note: {line}")
    if result.computed.table is not None:
        table = result.computed.table
        print()
        print("  " + " | ".join(table.columns))
        for row in table.rows:
            print("  " + " | ".join(row))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    command = args.pop("command", None)
    if command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    if command == "list":
        for calc in REGISTRY.values():
            print(f"{calc.id:<22} {calc.summary}")
        return 0
    if command == "presets":
        for preset in presets.PRESETS:
            print(f"{preset.id:<22} {preset.label} ({preset.kind})\n{'':<22} {preset.source}")
        return 0
    as_json = args.pop("json", False)
    preset_id = args.pop("preset", None)
    config_path = args.pop("config", None)
    try:
        calc = REGISTRY[command]
        if config_path is not None:
            args = {**_config_texts(calc, config_path), **args}
        if preset_id is not None:
            preset = presets.get(preset_id)
            if preset not in presets.presets_for(calc):
                raise ValidationError("preset", f"{preset_id!r} does not apply to {calc.id}")
            args = {**presets.preset_texts(calc, preset), **args}
        result = calc.compute(args)
    except ValidationError as err:
        print(
            f"bigmodel {command}: invalid --{err.input_name.replace('_', '-')}: {err.message}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_human(result)
    return 0
