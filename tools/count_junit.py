#!/usr/bin/env python3
"""Count passed/failed/skipped test cases in meson junit logs.

Usage: count_junit.py LABEL=FILE... ; prints one line per file and a total
line 'N passed, N failed, N skipped' (the skipped part only when non-zero).

A gtest executable can pass every case and still fail: a sanitizer's leak
report or an abort at exit.  meson's junit log keeps only the cases, so
each test's own result is read from testlog.json beside it, and a failed
test none of whose cases failed counts as one failure."""
import json
import os
import sys
import xml.etree.ElementTree as ET

FAILED = {"FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS", "INTERRUPT"}


def failed_tests(junit_path):
    """Names of the meson tests whose process failed, from testlog.json."""
    path = os.path.join(os.path.dirname(junit_path), "testlog.json")
    names = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                entry = json.loads(line)
                if entry.get("result") in FAILED:
                    names.append(entry["name"])
    except (OSError, ValueError) as e:
        print(f"{junit_path}: no readable testlog.json ({e})")
        names.append(None)
    return names


total = [0, 0, 0]
for arg in sys.argv[1:]:
    label, _, path = arg.partition("=")
    p = f = s = 0
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{label}: no test log ({e})")
        total[1] += 1
        continue
    # meson names a gtest's suites "<project>.<test name>.<gtest suite>";
    # a test without cases is one case named after the test.
    failed_suites, failed_cases = [], set()
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                f += 1
                failed_suites.append(suite.get("name", ""))
                failed_cases.add(case.get("name", ""))
            elif case.find("skipped") is not None or case.get("status") == "notrun":
                s += 1
            else:
                p += 1
    for name in failed_tests(path):
        if name is None:
            f += 1
        elif name not in failed_cases and not any(
            f".{name}." in n or n.endswith(f".{name}") for n in failed_suites
        ):
            print(f"{label}: {name} failed outside its test cases")
            f += 1
    print(f"{label}: {p} passed, {f} failed, {s} skipped")
    total[0] += p
    total[1] += f
    total[2] += s
line = f"{total[0]} passed, {total[1]} failed"
if total[2]:
    line += f", {total[2]} skipped"
print(line)
sys.exit(1 if total[1] else 0)
