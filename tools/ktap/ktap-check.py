#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# ktap-check.py - parse a KTAP document with the kernel's own KTAP parser
# (tools/testing/kunit/kunit_parser.py of a kernel tree) and check that it
# parsed without an error and that every case is accounted for, with the
# verdicts the project's own KTAP reader (tools/ktap/ktap) reads from the
# same lines.
#
# Prints its checks in KTAP, as tools/lib.sh's reporter does, and ends
# with "N passed, N failed". Exit status 0 when nothing failed, 1
# otherwise, 2 bad usage.

import argparse
import io
import os
import subprocess
import sys

PROG = os.path.basename(sys.argv[0])
KTAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ktap')


def load_parser(kunit_dir):
    """kunit_parser from KUNIT_DIR (tools/testing/kunit of a kernel tree)."""
    if not os.path.isfile(os.path.join(kunit_dir, 'kunit_parser.py')):
        sys.exit(f'{PROG}: no kunit_parser.py in {kunit_dir}')
    sys.path.insert(0, kunit_dir)
    import kunit_parser  # pylint: disable=import-outside-toplevel
    return kunit_parser


def parse(kunit_parser, lines):
    """The parsed Test, and what the parser printed (its report, errors
    included), which is also shown, each line prefixed with '# '.  Up to
    6.x parse_run_tests() prints on the module's own printer; since then
    (7.2's) it takes the printer as an argument."""
    output = io.StringIO()
    if hasattr(kunit_parser, 'stdout'):
        printer = kunit_parser.stdout
        saved = printer._output  # pylint: disable=protected-access
        printer._output = output  # pylint: disable=protected-access
        try:
            test = kunit_parser.parse_run_tests(lines)
        finally:
            printer._output = saved  # pylint: disable=protected-access
    else:
        import kunit_printer  # pylint: disable=import-outside-toplevel
        test = kunit_parser.parse_run_tests(lines, kunit_printer.Printer(output=output))
    printed = output.getvalue()
    for line in printed.splitlines():
        print('# ' + line)
    return test, printed


class Checks:
    """KTAP results, a failure's detail after it, and their count."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        print('KTAP version 1')

    def check(self, ok, what, detail=''):
        self.passed += ok
        self.failed += not ok
        print(f'{"ok" if ok else "not ok"} {self.passed + self.failed} {what}')
        if detail and not ok:
            print(f'# {detail}')

    def summary(self):
        print(f'1..{self.passed + self.failed}')
        print(f'{self.passed} passed, {self.failed} failed')
        return 0 if self.failed == 0 else 1


def ktap(args, lines):
    """What the project's KTAP reader prints for ARGS, reading LINES."""
    run = subprocess.run([KTAP] + args, input=''.join(lines),
                         capture_output=True, text=True, check=False)
    if run.returncode == 2:
        sys.exit(f'{PROG}: {KTAP} {" ".join(args)}: {run.stderr.strip()}')
    return run.stdout


def nested_document(lines, header):
    """The document a kselftest runner nests under '# HEADER', without
    the runner's '# ' prefix."""
    return ktap(['--nested', header, 'document'], lines).splitlines(
        keepends=True)


def written_verdicts(lines):
    """The result lines as written, case -> verdicts ('ok', 'not ok',
    'skip'), as the project's KTAP reader reads them.  An XFAIL is 'ok':
    kunit_parser knows no directive but SKIP and, as KTAP says of a
    directive a parser does not know, falls back to the "ok"."""
    kind = {'ok': 'ok', 'xfail': 'ok', 'skip': 'skip', 'not-ok': 'not ok',
            'timeout': 'not ok', 'error': 'not ok'}
    written = {}
    for line in ktap(['verdicts'], lines).splitlines():
        name, verdict = line.split(' ', 1)[1].rsplit(' ', 1)
        written.setdefault(name, []).append(kind[verdict])
    return written


def check_document(kunit_parser, checks, lines, name, cases=None,
                   expect='any'):
    """The checks of one KTAP document."""
    status = kunit_parser.TestStatus

    test, printed = parse(kunit_parser, lines)
    errors = [l for l in printed.splitlines() if '[ERROR]' in l]
    checks.check(test.counts.errors == 0 and not errors,
                 f'{name}: the kernel\'s KTAP parser reports no error',
                 '; '.join(e.split('] ', 1)[-1] for e in errors))
    checks.check(test.status not in (status.TEST_CRASHED,
                                     status.FAILURE_TO_PARSE_TESTS,
                                     status.NO_TESTS),
                 f'{name}: parsed as a test run',
                 f'status {test.status.name}')

    parsed = {}
    for sub in test.subtests:
        parsed.setdefault(sub.name, []).append(sub.status)
    # The result lines as written, to compare with what the parser made
    # of them.
    written = written_verdicts(lines)
    want = {'ok': status.SUCCESS, 'not ok': status.FAILURE,
            'skip': status.SKIPPED}
    agree = all(len(parsed.get(n, [])) == len(v) and
                all(want[w] == p for w, p in zip(v, parsed[n]))
                for n, v in written.items())
    checks.check(agree and len(parsed) == len(written),
                 f'{name}: the parser\'s verdicts are the result lines\'',
                 f'written {written}, parsed '
                 f'{ {n: [s.name for s in v] for n, v in parsed.items()} }')

    if cases is not None:
        missing = [c for c in cases if c not in parsed]
        extra = [n for n in parsed if n not in cases]
        twice = [n for n, v in parsed.items() if len(v) > 1]
        checks.check(not missing and not extra and not twice,
                     f'{name}: every one of the {len(cases)} cases '
                     'accounted for, once',
                     f'missing {missing}, unknown {extra}, twice {twice}')
        checks.check(test.expected_count == len(cases),
                     f'{name}: the plan counts {len(cases)} cases',
                     f'plan 1..{test.expected_count}')

    statuses = [s for v in parsed.values() for s in v]
    if expect == 'ok':
        bad = [n for n, v in parsed.items()
               if any(s not in (status.SUCCESS, status.SKIPPED) for s in v)]
        checks.check(not bad, f'{name}: no case failed', f'failed: {bad}')
    elif expect == 'skip':
        checks.check(statuses and all(s == status.SKIPPED for s in statuses),
                     f'{name}: every case skipped',
                     f'{[s.name for s in statuses]}')


def main():
    ap = argparse.ArgumentParser(
        prog=PROG,
        description='Check a KTAP document with the kernel\'s KTAP parser.')
    ap.add_argument('--kunit', required=True, metavar='DIR',
                    help='tools/testing/kunit of a kernel source tree')
    ap.add_argument('--cases', metavar='FILE',
                    help='the case names the document must hold, one per '
                    'line, first word (the runner\'s --list)')
    ap.add_argument('--name', default='',
                    help='what to call the document in its checks')
    ap.add_argument('--expect-status', choices=['ok', 'skip', 'any'],
                    default='any',
                    help='ok: no case failed or crashed; skip: every case '
                    'was skipped')
    ap.add_argument('--nested', metavar='HEADER',
                    help='the document is a kselftest runner\'s: check it, '
                    'then the one nested under "# HEADER" (e.g. "selftests: '
                    'module_async: module_async.sh"), to which --cases and '
                    '--expect-status apply')
    ap.add_argument('ktap', metavar='KTAP_FILE')
    args = ap.parse_args()

    kunit_parser = load_parser(args.kunit)
    with open(args.ktap, encoding='utf-8', errors='replace') as f:
        lines = f.read().splitlines(keepends=True)
    name = args.name or args.ktap
    checks = Checks()
    cases = None
    if args.cases:
        with open(args.cases, encoding='utf-8') as f:
            cases = [l.split()[0] for l in f if l.strip()]

    if args.nested:
        check_document(kunit_parser, checks, lines, f'{name} (runner)')
        inner = nested_document(lines, args.nested)
        checks.check(bool(inner), f'{name}: "# {args.nested}" and a document '
                     'nested under it')
        lines = inner
        name = f'{name} (nested)'
    check_document(kunit_parser, checks, lines, name, cases,
                   args.expect_status)

    return checks.summary()


if __name__ == '__main__':
    sys.exit(main())
