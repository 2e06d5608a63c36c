"""The task set: each task a prompt, the tools it is offered, and a rule that
checks the outcome (the final answer, the work directory, the calls made).

Kinds:
- `arith`: multi-step additions through the MCP `add` server (offered: calc).
- `files`: file and shell tasks through the built-ins (offered: builtins).
- `mixed`: built-ins and `add` in one task (offered: calc + builtins).
- `none`: tasks that need no tool (offered: calc + builtins), so a technique
  that adds needless calls shows up as a loss; where a tool call is pointless
  the rule also requires that none ran.

`min_calls` is the fewest tool calls a correct solution makes; a wrong answer
after fewer calls is classed as a premature answer.
"""

import os
import re
from dataclasses import dataclass, field

BASE_FILES = {
    "notes.txt": "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\n",
    "data.txt": "red green blue yellow\n",
    "README.md": "# Demo\n\nline three\nline four\nline five\nline six\n",
    "numbers.txt": "4\n8\n15\n16\n23\n42\n",
}


@dataclass
class Outcome:
    """What a run left behind, for the rules."""

    answer: str
    workdir: str
    calls: list  # [{"name", "arguments", "output", "error"}]


@dataclass
class Task:
    name: str
    kind: str
    prompt: str
    check: object  # Outcome -> bool
    min_calls: int = 0
    files: dict = field(default_factory=dict)

    @property
    def offered(self):
        return {"arith": ("calc",), "files": ("builtins",)}.get(self.kind, ("calc", "builtins"))


def number_in(text, n):
    text = text.replace(",", "")
    return re.search(rf"(?<![\d.\-]){re.escape(str(n))}(?![\d])", text) is not None


def has_number(n):
    return lambda o: number_in(o.answer, n)


def has_word(*words):
    return lambda o: any(w.lower() in o.answer.lower() for w in words)


def no_tool(rule):
    return lambda o: not o.calls and rule(o)


def read(o, name):
    path = os.path.join(o.workdir, name)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def file_has(name, needle):
    return lambda o: needle in (read(o, name) or "")


def file_number(name, n):
    return lambda o: number_in(read(o, name) or "", n)


def file_lines(name, lines):
    return lambda o: (read(o, name) or "").strip().splitlines() == lines


def both(a, b):
    return lambda o: a(o) and b(o)


def arith(name, prompt, expected, steps):
    return Task(name, "arith", prompt, has_number(expected), min_calls=steps)


TASKS = [
    # Arithmetic through MCP: one step (control), then 2, 3 and 4 steps.
    arith("one-add", "What is 123 + 456? Use the add tool.", 579, 1),
    arith("add-then-add", "Add 10 and 20, then add 5 to the result.", 35, 2),
    arith("double-then-add", "Add 21 to itself, then add 8 to that.", 50, 2),
    arith("chain-big", "Compute 1234 + 4321, then add 1111 to the result.", 6666, 2),
    arith("negative", "Add -15 and 40, then add 10.", 35, 2),
    arith("negative-result", "Add -100 and 37, then add -12. What is the result?", -75, 2),
    arith("word-problem", "I have 12 apples, buy 30 more, then get 8 more. Use the add tool. How many?", 50, 2),
    arith("word-savings", "Anna saves 120 dollars in January, 85 in February and 60 in March. "
          "Use the add tool to find how much she saved in total.", 265, 2),
    arith("word-balance", "A bank account holds -250 dollars. Then 400 is deposited, then 75 more. "
          "Use the add tool. What is the balance?", 225, 2),
    arith("three-adds", "Add 7 and 8, then add 100, then add 1000. What is the final number?", 1115, 3),
    arith("sum-four", "What is 13 + 29 + 41 + 7? Use the add tool for every addition.", 90, 3),
    arith("add-pairs", "Add 3 and 4. Add 5 and 6. Then add the two results together.", 18, 3),
    arith("running-total", "Start at 50. Add 25, then add 25 again, then add 100.", 200, 3),
    arith("word-trip", "A trip has four legs: 132 km, 87 km, 205 km and 46 km. "
          "Use the add tool to get the total distance.", 470, 3),
    arith("five-terms", "Add 1, 2, 3, 4 and 5 using the add tool, one addition at a time.", 15, 4),
    arith("four-steps", "Start with 9. Add 11, then add 30, then add 50, then add 900. "
          "What is the final number?", 1000, 4),
    arith("negative-four", "Add -5 and -7, then add 20, then add -3, then add 100.", 105, 4),
    # File and shell tasks through the built-ins.
    Task("count-lines-readme", "files", "Count the lines of README.md in the work directory.", has_number(6), 1),
    Task("count-lines-notes", "files", "How many lines does notes.txt have?", has_number(7), 1),
    Task("third-word", "files", "What is the third word in data.txt?", has_word("blue"), 1),
    Task("last-line", "files", "What is the last line of notes.txt?", has_word("eta"), 1),
    Task("sum-numbers", "files", "Read numbers.txt and tell me the sum of the numbers in it.", has_number(108), 1),
    Task("count-e-lines", "files", "How many lines of notes.txt contain the letter e?", has_number(5), 1),
    Task("list-txt", "files", "How many .txt files are in the work directory? List it to find out.", has_number(3), 1),
    Task("list-md", "files", "List the work directory and tell me the name of the only Markdown file.",
         has_word("README.md"), 1),
    Task("shell-wc", "files", "Use the shell to run `wc -w data.txt` and tell me the word count.", has_number(4), 1),
    Task("shell-echo", "files", "Run the shell command `echo $((6*7))` and tell me what it printed.", has_number(42), 1),
    Task("write-hello", "files", "Create a file named out.txt containing exactly the word hello.",
         file_has("out.txt", "hello"), 1),
    Task("write-two-lines", "files", "Create a file named pair.txt with two lines: the first line is one, "
         "the second line is two.", file_lines("pair.txt", ["one", "two"]), 1),
    Task("edit-notes", "files", "In notes.txt replace the word gamma with GAMMA.", file_has("notes.txt", "GAMMA"), 1),
    Task("copy-first", "files", "Write the first line of notes.txt into a new file first.txt.",
         file_has("first.txt", "alpha"), 2),
    # Mixed: built-ins and the add tool in one task.
    Task("read-then-add", "mixed", "Read the number in a.txt, then use the add tool to add 58 to it.",
         has_number(100), 2, {"a.txt": "42\n"}),
    Task("two-files-add", "mixed", "Read x.txt and y.txt (each holds one number) and add the two numbers "
         "with the add tool.", has_number(43), 3, {"x.txt": "17\n", "y.txt": "26\n"}),
    Task("count-then-add", "mixed", "Count the lines of notes.txt, then use the add tool to add 100 to that count.",
         has_number(107), 2),
    Task("first-last-add", "mixed", "Read numbers.txt and use the add tool to add its first and last numbers.",
         has_number(46), 2),
    Task("add-then-write", "mixed", "Use the add tool to add 250 and 175, then write the result into result.txt.",
         file_number("result.txt", 425), 2),
    Task("chain-write", "mixed", "Add 8 and 9 with the add tool, then add 10 to that, and write the final "
         "number to total.txt.", file_number("total.txt", 27), 3),
    Task("read-add-write", "mixed", "Read the number in a.txt, add 8 to it with the add tool, and write the "
         "sum to b.txt.", file_number("b.txt", 50), 3, {"a.txt": "42\n"}),
    # No tool needed. Where a tool call is pointless, none may run.
    Task("capital", "none", "What is the capital of France? Answer in one word.", no_tool(has_word("paris"))),
    Task("past-tense", "none", "Rewrite this sentence in the past tense: The cat sits on the mat.",
         no_tool(has_word("cat sat"))),
    Task("translate", "none", "Translate 'good morning' into French.", no_tool(has_word("bonjour"))),
    Task("plural", "none", "What is the plural of the word mouse?", no_tool(has_word("mice"))),
    Task("synonym", "none", "Give one synonym for the word happy.",
         no_tool(has_word("joyful", "glad", "cheerful", "content", "delighted", "pleased", "merry", "elated"))),
    Task("reverse-code", "none", "Write a Python expression that reverses a string s. Just the expression.",
         no_tool(has_word("[::-1]", "reversed("))),
    Task("two-plus-two", "none", "What is 2 + 2? You may answer directly.", has_number(4)),
    Task("larger", "none", "Which is larger, 17 or 71? Answer with the number.", has_number(71)),
    Task("week-days", "none", "How many days are in a week?", has_number(7)),
]


def reset_workdir(workdir, task):
    """The work directory holds exactly the base files and the task's own."""
    os.makedirs(workdir, exist_ok=True)
    for name in os.listdir(workdir):
        path = os.path.join(workdir, name)
        if os.path.isfile(path) or os.path.islink(path):
            os.remove(path)
        elif os.path.isdir(path):
            import shutil

            shutil.rmtree(path)
    for name, text in {**BASE_FILES, **task.files}.items():
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(text)


def select(names):
    """Tasks by name or kind (comma list); all when empty."""
    if not names:
        return list(TASKS)
    wanted = set(names.split(","))
    return [t for t in TASKS if t.name in wanted or t.kind in wanted]
