#!/usr/bin/env python3
"""Count passed/failed/skipped test cases in meson junit logs.

Usage: count_junit.py LABEL=FILE... ; prints one line per file and a total
line 'N passed, N failed, N skipped' (the skipped part only when non-zero)."""
import sys
import xml.etree.ElementTree as ET

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
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            f += 1
        elif case.find("skipped") is not None or case.get("status") == "notrun":
            s += 1
        else:
            p += 1
    print(f"{label}: {p} passed, {f} failed, {s} skipped")
    total[0] += p
    total[1] += f
    total[2] += s
line = f"{total[0]} passed, {total[1]} failed"
if total[2]:
    line += f", {total[2]} skipped"
print(line)
sys.exit(1 if total[1] else 0)
