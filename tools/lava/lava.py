#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""lava.py - LAVA's own libraries (Debian's lava_common, jinja2, yaml) for lava.sh.

usage: lava.py COMMAND ARG...
  job TEMPLATE KEY=VALUE...  the job template rendered, every variable given
  device DICT TYPES JOB      DICT on lava-server's device-types TYPES, JOB's context
  validate JOB...            each job through lava_common's job schema
  timeout JOB                the job's timeout in seconds
  results LOG DEFINITION [CASES]
                             "CASE RESULT" a case of DEFINITION lava-run logged;
                             exit as make vm's (1 also: a case of CASES unrecorded)

Exit status: 0; 1 an invalid job; 2 bad usage; 3 any other failure.
"""

import sys
from typing import Any, NoReturn

import jinja2
import yaml


def usage(msg: str) -> NoReturn:
    print(f"lava.py: {msg}\n{__doc__}", file=sys.stderr)
    sys.exit(2)


def load(path: str) -> Any:
    with open(path) as f:
        return yaml.safe_load(f)


def render(template: str, values: dict[str, Any], **env: Any) -> None:
    with open(template) as f:
        text = f.read()
    sys.stdout.write(jinja2.Environment(**env).from_string(text).render(**values))


def validate(jobs: list[str]) -> int:
    from lava_common.schemas import validate as lava_validate  # type: ignore[import]

    bad = 0
    for job in jobs:
        try:
            lava_validate(load(job), strict=True)
        except Exception as exc:  # voluptuous' Invalid and its kin
            print(f"{job}: invalid: {exc}", file=sys.stderr)
            bad = 1
    return bad


def results(log: str, definition: str, cases: str | None = None) -> int:
    job = None
    got: list[tuple[str, str]] = []
    with open(log, errors="replace") as f:
        for line in f:
            # YAML, not JSON: a line may carry tags ("size": ! "65906612").
            try:
                entry = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
            if not isinstance(entry, dict) or entry.get("lvl") != "results":
                continue
            msg = entry.get("msg")
            if not isinstance(msg, dict):
                continue
            if msg.get("definition") == definition:
                # LAVA's case name is lowercased, runs of non-word characters
                # "_"; the result line's own is in extra.test_case_id.
                name = str((msg.get("extra") or {}).get("test_case_id", msg.get("case")))
                got.append((name, str(msg.get("result"))))
                print(*got[-1])
            elif msg.get("definition") == "lava" and msg.get("case") == "job":
                job = msg.get("result")
    if job != "pass" or not got:
        print(f"lava.py: LAVA's job {job or 'unfinished'}, {len(got)} cases recorded",
              file=sys.stderr)
        return 3
    names = {name for name, _ in got}
    missing = []
    if cases:
        with open(cases) as f:
            missing = [w[0] for w in map(str.split, f) if w and w[0] not in names]
    if missing:
        print(f"lava.py: LAVA recorded no result for: {' '.join(missing)}", file=sys.stderr)
    verdicts = {result for _, result in got}
    if missing or "fail" in verdicts:
        return 1
    return 4 if verdicts == {"skip"} else 0


def main(argv: list[str]) -> int:
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "job" and args:
        if bad := [pair for pair in args[1:] if "=" not in pair]:
            usage(f"not KEY=VALUE: {bad[0]}")
        render(args[0], dict(pair.split("=", 1) for pair in args[1:]),
               undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    elif cmd == "device" and len(args) == 3:
        render(args[0], load(args[2]).get("context", {}),
               loader=jinja2.FileSystemLoader([args[1]]), trim_blocks=True, autoescape=False)
    elif cmd == "validate" and args:
        return validate(args)
    elif cmd == "timeout" and len(args) == 1:
        from lava_common.timeout import Timeout  # type: ignore[import]
        print(int(Timeout.parse(load(args[0])["timeouts"]["job"])))
    elif cmd == "results" and len(args) in (2, 3):
        return results(*args)
    else:
        usage(f"bad command or arguments: {' '.join(argv[1:]) or '(none)'}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, KeyError, ValueError, jinja2.TemplateError, yaml.YAMLError) as exc:
        print(f"lava.py: {exc}", file=sys.stderr)
        sys.exit(3)
