"""Run unittest discovery and write a JUnit XML report (the standard library has no JUnit output)."""

import sys
import unittest
from xml.sax.saxutils import quoteattr


class Recorder(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []

    def _record(self, test, outcome, text=""):
        self.cases.append((type(test).__module__ + "." + type(test).__qualname__, test._testMethodName, outcome, text))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, None)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        if hasattr(test, "_testMethodName"):
            self._record(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)


def main(start, report):
    suite = unittest.defaultTestLoader.discover(start, top_level_dir=".")
    result = unittest.TextTestRunner(resultclass=Recorder, verbosity=1).run(suite)
    with open(report, "w") as out:
        out.write(f'<testsuite tests="{len(result.cases)}">\n')
        for classname, name, outcome, text in result.cases:
            out.write(f"  <testcase classname={quoteattr(classname)} name={quoteattr(name)}>")
            if outcome:
                out.write(f"<{outcome} message={quoteattr(text[-500:])}/>")
            out.write("</testcase>\n")
        out.write("</testsuite>\n")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
