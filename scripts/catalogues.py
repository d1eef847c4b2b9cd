"""Keep the message catalogues in step with the code.

    python scripts/catalogues.py update   # extract (Babel), merge into each .po, compile .mo
    python scripts/catalogues.py check    # list strings without a translation; exit 1 if any
    python scripts/catalogues.py merge F  # fill empty entries from F, JSON {english: zh}

Two catalogues: the calculators' (``calculators/locale/<lang>/LC_MESSAGES/calculators.po``,
which the calculators read natively and in Pyodide) and the site's
(``bigmodel_guide/locale/<lang>/LC_MESSAGES/site.po``: the Validation and Hardware
pages, read by the build only). Translators edit a ``.po`` and run ``update``, which also
writes its ``.mo``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bigmodel_guide import catalogues
from bigmodel_guide.site_text import CATALOGUES as DOMAINS


def update() -> int:
    for domain, template in DOMAINS:
        fresh = template()
        domain.template_path.parent.mkdir(parents=True, exist_ok=True)
        domain.template_path.write_bytes(catalogues.po_bytes(fresh))
        for lang in catalogues.TRANSLATED:
            catalog = catalogues.updated(lang, fresh, domain)
            domain.po_path(lang).parent.mkdir(parents=True, exist_ok=True)
            domain.po_path(lang).write_bytes(catalogues.po_bytes(catalog))
            domain.mo_path(lang).write_bytes(catalogues.mo_bytes(catalog))
            missing = sum(1 for m in catalog if m.id and not m.string)
            print(f"{domain.name} {lang}: {len(catalog)} strings, {missing} without a translation")
    return 0


def merge(path: str) -> int:
    """Fill translations from a JSON file {english: chinese} (keys "unit|english" for
    unit words); only empty entries are filled. Then compile."""
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    lang = "zh"
    for domain, _template in DOMAINS:
        catalog = catalogues.read(domain.po_path(lang), domain)
        filled = 0
        for message in catalog:
            if not message.id or message.string:
                continue
            key = f"{message.context}|{message.id}" if message.context else str(message.id)
            if isinstance(table.get(key), str) and table[key].strip():
                message.string = table[key]
                filled += 1
        domain.po_path(lang).write_bytes(catalogues.po_bytes(catalog))
        domain.mo_path(lang).write_bytes(catalogues.mo_bytes(catalog))
        print(f"{domain.name} {lang}: filled {filled} translations from {path}")
    return update()  # the .po as update writes it (with each string's locations)


def check() -> int:
    found = [p for domain, template in DOMAINS for fresh in [template()]
             for lang in catalogues.TRANSLATED for p in catalogues.problems(lang, fresh, domain)]
    for problem in found:
        print(f"{problem.lang}: {problem.what}: {problem.message[:100]!r}")
    print(f"{len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "merge":
        sys.exit(merge(sys.argv[2]))
    commands = {"update": update, "check": check}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        print(__doc__)
        sys.exit(2)
    sys.exit(commands[sys.argv[1]]())
