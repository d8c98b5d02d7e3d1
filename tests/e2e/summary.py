"""One table of the end-to-end cases from the JUnit reports ctest's pytest runs leave behind.

Usage: summary.py RESULTS_DIR

Prints a line per module (cases passed, failed, skipped, seconds) and then each case that did
not pass by its pytest id, so a red run names its cases without reading a log. Exits 1 when a
case failed or errored, or when a module left no report (it crashed before pytest wrote one).
"""
import glob
import os
import sys
import xml.etree.ElementTree as ElementTree


def cases(report):
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        name = case.get("classname", "").replace(".", "/") + ".py::" + case.get("name", "")
        yield name, outcome, float(case.get("time") or 0)


def main(argv):
    results = argv[1]
    reports = sorted(glob.glob(os.path.join(results, "*.xml")))
    if not reports:
        print(f"summary: no JUnit reports under {results}")
        return 1
    bad = []
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    for report in reports:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        seconds = 0.0
        try:
            rows = list(cases(report))
        except ElementTree.ParseError as error:
            print(f"{os.path.basename(report)}: unreadable report ({error})")
            bad.append(report)
            continue
        for name, outcome, took in rows:
            counts[outcome] += 1
            seconds += took
            if outcome == "failed":
                bad.append(name)
        for key in totals:
            totals[key] += counts[key]
        module = os.path.splitext(os.path.basename(report))[0]
        print(f"{module:<32} {counts['passed']:>4} passed {counts['failed']:>3} failed "
              f"{counts['skipped']:>3} skipped {seconds:>8.1f} s")
    print(f"{'all':<32} {totals['passed']:>4} passed {totals['failed']:>3} failed "
          f"{totals['skipped']:>3} skipped")
    for name in bad:
        print("FAILED", name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
