"""The expected-to-pass list shared by the node-test harnesses: rewrite it
from the passing tests (--update), report failures and regressions against
it, and print the summary line."""


def check_against_expected(results, path, update, verbose, what, tool):
    """`results` holds (name, kind, detail) with kind passed/failed/skipped.
    Returns the number of expected tests that did not pass."""
    passed = sorted(name for name, kind, _ in results if kind == "passed")
    if update:
        with open(path, "w") as f:
            f.write(f"# ONNX node tests that must pass {what} ({tool} --update)\n")
            f.writelines(f"{name}\n" for name in passed)
    with open(path) as f:
        expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    failures = 0
    for name, kind, detail in results:
        if kind == "failed" and (name in expected or verbose):
            print(f"FAIL {name}: {detail}")
        if verbose and kind == "skipped":
            print(f"SKIP {name}: {detail}")
        if name in expected and kind != "passed":
            failures += 1
            if kind != "failed":
                print(f"REGRESSION {name}: {kind}: {detail}")
    counts = {k: sum(1 for _, kind, _ in results if kind == k)
              for k in ("passed", "failed", "skipped")}
    print(f"{len(results)} node tests {what}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped")
    return failures
