#!/usr/bin/python3
"""The rule names of tools/hf_bounds.py are those of the C table: RULE_WORDS (name -> short
form) must be HF_RULE_TABLE of include/headfuse/bounds.h, read from the header itself, row
for row (names and short forms, in the table's order). A rule added to one and not the
other fails here. CTest runs `python3 tests/python/test_rule_table.py` (test
py.rule_table); `python3 -m pytest tests/python` runs it too."""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import hf_bounds  # noqa: E402


def c_rule_table(path):
    """(name, short form) of every X(...) row of HF_RULE_TABLE in the header at path."""
    text = open(path, encoding="utf-8").read()
    start = text.index("#define HF_RULE_TABLE(X)")
    end = text.index("\n\n", start)
    block = text[start:end].replace("\\\n", " ")
    rows = re.findall(r'X\(\s*(HF_RULE_\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"', block)
    return [(name, brief) for _, name, brief in rows]


class RuleTable(unittest.TestCase):
    def test_python_copy_is_the_c_table(self):
        table = c_rule_table(os.path.join(ROOT, "include", "headfuse", "bounds.h"))
        self.assertGreaterEqual(len(table), 6, "HF_RULE_TABLE not found or not parsed")
        self.assertEqual(list(hf_bounds.RULE_WORDS.items()), table)

    def test_a_changed_copy_is_caught(self):
        table = c_rule_table(os.path.join(ROOT, "include", "headfuse", "bounds.h"))
        planted = dict(hf_bounds.RULE_WORDS)
        planted["newton_4d"] = "4-D Newton argument"
        self.assertNotEqual(list(planted.items()), table)


if __name__ == "__main__":
    unittest.main()
