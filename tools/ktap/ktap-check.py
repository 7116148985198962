#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# ktap-check.py - a second opinion on a KTAP document: the kernel's own KTAP
# parser (tools/testing/kunit/kunit_parser.py) reads it without an error,
# every case once, with tools/ktap/ktap's verdicts.  Exit 0, 1 a check failed.

import argparse
import io
import os
import sys
from importlib.machinery import SourceFileLoader
from types import ModuleType

PROG = os.path.basename(sys.argv[0])
ktap = ModuleType('ktap')  # the project's own KTAP reader
SourceFileLoader('ktap', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      'ktap')).exec_module(ktap)
def parse(kunit_parser, lines):
    """The parsed Test and the parser's report, shown as '# ' lines.  Up to
    6.x parse_run_tests() prints on the module's printer, since 7.2 on the
    one it is given."""
    output = io.StringIO()
    if hasattr(kunit_parser, 'stdout'):
        kunit_parser.stdout._output = output  # pylint: disable=protected-access
        test = kunit_parser.parse_run_tests(lines)
    else:
        import kunit_printer  # pylint: disable=import-outside-toplevel
        test = kunit_parser.parse_run_tests(lines, kunit_printer.Printer(output=output))
    for line in output.getvalue().splitlines():
        print('# ' + line)
    return test, output.getvalue()


def check_document(check, kunit_parser, lines, name, cases=None, expect='any'):
    status = kunit_parser.TestStatus
    test, printed = parse(kunit_parser, lines)
    errors = [e.split('] ', 1)[-1] for e in printed.splitlines() if '[ERROR]' in e]
    check(test.counts.errors == 0 and not errors,
          f"{name}: the kernel's KTAP parser reports no error", '; '.join(errors))
    check(test.status not in (status.TEST_CRASHED, status.FAILURE_TO_PARSE_TESTS,
                              status.NO_TESTS),
          f'{name}: parsed as a test run', f'status {test.status.name}')
    parsed = {}
    for sub in test.subtests:
        parsed.setdefault(sub.name, []).append(sub.status.name)
    # kunit_parser knows no directive but SKIP: an XFAIL is its "ok".
    kind = {'ok': 'SUCCESS', 'xfail': 'SUCCESS', 'skip': 'SKIPPED'}
    written = {}
    for r in ktap.Document(lines).results:
        written.setdefault(r.label(), []).append(kind.get(r.verdict, 'FAILURE'))
    check(parsed == written, f"{name}: the parser's verdicts are the result lines'",
          f'written {written}, parsed {parsed}')
    if cases is not None:
        missing = [c for c in cases if c not in parsed]
        extra = [n for n in parsed if n not in cases]
        twice = [n for n, v in parsed.items() if len(v) > 1]
        check(not missing and not extra and not twice,
              f'{name}: every one of the {len(cases)} cases accounted for, once',
              f'missing {missing}, unknown {extra}, twice {twice}')
        check(test.expected_count == len(cases), f'{name}: the plan counts {len(cases)} cases',
              f'plan 1..{test.expected_count}')
    statuses = [s for v in parsed.values() for s in v]
    if expect == 'skip':
        check(statuses and set(statuses) == {'SKIPPED'}, f'{name}: every case skipped',
              f'{statuses}')


def main():
    ap = argparse.ArgumentParser(prog=PROG, description="Check a KTAP document with the "
                                 "kernel's KTAP parser.")
    ap.add_argument('--kunit', required=True, metavar='DIR',
                    help='tools/testing/kunit of a kernel source tree')
    ap.add_argument('--cases', metavar='FILE',
                    help="the cases the document must hold, first word a line (--list's)")
    ap.add_argument('--name', default='', help='what to call the document in its checks')
    ap.add_argument('--expect-status', choices=['skip', 'any'], default='any',
                    help='skip: every case was skipped')
    ap.add_argument('--nested', metavar='HEADER', help="check the kselftest runner's "
                    'document, then the one nested under "# HEADER"')
    ap.add_argument('ktap', metavar='KTAP_FILE')
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.kunit, 'kunit_parser.py')):
        sys.exit(f'{PROG}: no kunit_parser.py in {args.kunit}')
    sys.path.insert(0, args.kunit)
    import kunit_parser  # pylint: disable=import-outside-toplevel
    with open(args.ktap, encoding='utf-8', errors='replace') as f:
        lines = f.read().splitlines()
    name = args.name or args.ktap
    cases = [x.split()[0] for x in ktap.document_lines(args.cases) if x.strip()] \
        if args.cases else None
    checks = ktap.Checks()
    check = checks.check
    if args.nested:
        check_document(check, kunit_parser, lines, f'{name} (runner)')
        lines = ktap.nested_lines(lines, args.nested)
        check(bool(lines), f'{name}: "# {args.nested}" and a document nested under it')
        name = f'{name} (nested)'
    check_document(check, kunit_parser, lines, name, cases, args.expect_status)
    return checks.summary()


if __name__ == '__main__':
    sys.exit(main())
