#!/usr/bin/env python3
# guide.py - docs/guide.md, followed as written, as a test (TAP on stdout).
#
#   guide.py GUIDE MOUNTPOINT WORKDIR
#
# Every shell session of the guide (a ``` block whose first line starts
# with "$ ") runs, in order, in one bash, in WORKDIR: a command, then its
# output is compared with the lines the guide shows under it.  /run/memcgfs
# becomes MOUNTPOINT.  What differs from run to run is masked on both sides
# (handles, pids, times, pointers, PSI averages, symbol offsets); nothing
# else may differ.  Each C block is saved under the name its first line
# gives ("/* charge.c: ..."), so that the guide's compile lines build it.
# A ```sh block runs as a script only when a marker asks for it.
#
# Markers, an HTML comment on the line before a block (invisible in the
# rendered guide):
#   <!-- guide-test: skip REASON -->          the block is not run
#   <!-- guide-test: run, REASON -->          run, its output not compared
#   <!-- guide-test: script, prints REGEX -->  a ```sh block run on its own
#       with bash (at most 120 s); it must exit 0 and print a line matching
#       REGEX
import os
import re
import select
import subprocess
import sys
import time

guide, mnt, work = sys.argv[1:4]
TIMEOUT = 120

MASKS = [
    (re.compile(r"\b[0-9a-f]{16}\b"), "<hex>"),
    (re.compile(r"\bpid([= ])\d+"), r"pid\1<n>"),
    # ftrace pads COMM-PID to a width: the padding moves with the pid
    (re.compile(r"^ *([\w.-]+)-\d+ +\["), r"\1-<n> ["),
    (re.compile(r" +\d+\.\d{6}: "), " <t>: "),
    (re.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+"), "+<off>"),
    (re.compile(r"^(real|user|sys)\t\d+m[\d.]+s$"), r"\1\t<time>"),
    (re.compile(r"\b(avg\d+)=[\d.]+"), r"\1=<x>"),
    (re.compile(r"\btotal=\d+"), "total=<x>"),
    # a script's bash names the line, an interactive one does not
    (re.compile(r"^bash: line \d+: "), "bash: "),
]


# bash's word that a background job ended: an interactive shell's differs
JOB = re.compile(r"^(bash: (line \d+: )? *\d+ +|\[\d+\][+-]? +)(Done|Killed|Terminated)\b")


def mask(line):
    for rx, rep in MASKS:
        line = rx.sub(rep, line)
    return line.rstrip()


def blocks(path):
    """(section, info, marker, lines) of every fenced block."""
    section, marker, prev = "", None, ""
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## ") or line.startswith("### "):
            section = line.lstrip("#").strip()
        if line.startswith("```"):
            info = line[3:].strip()
            m = re.match(r"<!-- guide-test: (.*) -->$", prev.strip())
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield section, info, m.group(1) if m else None, body
            prev = ""
        elif line.strip():
            prev = line
        i += 1


class Shell:
    """One bash for the whole guide: variables, fds and cwd carry over."""

    def __init__(self):
        self.p = subprocess.Popen(["bash", "--norc", "--noprofile"], cwd=work,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        self.buf = b""
        self.n = 0

    def run(self, cmd):
        """The command's output lines (stdout and stderr), its status."""
        self.n += 1
        end = "@@guide-%d@@" % self.n
        self.p.stdin.write(("%s\nprintf '\\n%s %%s\\n' $?\n" % (cmd, end)).encode())
        self.p.stdin.flush()
        deadline = time.time() + TIMEOUT
        fd = self.p.stdout.fileno()
        while (end + " ").encode() not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None, "timeout"
            chunk = os.read(fd, 65536)
            if not chunk:
                return None, "bash exited"
            self.buf += chunk
        text, _, rest = self.buf.partition((end + " ").encode())
        status, _, self.buf = rest.partition(b"\n")
        out = text.decode(errors="replace")
        # the newline printed before the marker, then the output's own last one
        for _ in range(2):
            if out.endswith("\n"):
                out = out[:-1]
        return [l for l in out.split("\n")] if out else [], status.decode()

    def close(self):
        try:
            os.killpg(self.p.pid, 9)
        except ProcessLookupError:
            pass


def sub(s):
    return s.replace("/run/memcgfs", mnt)


count = failed = 0


def result(ok, what, detail=()):
    global count, failed
    count += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", count, what))
    for d in detail:
        print("#   " + d)
    sys.stdout.flush()


sh = Shell()
try:
    for section, info, marker, body in blocks(guide):
        if marker and marker.startswith("skip"):
            continue
        if info == "c" and body:
            m = re.match(r"/\* (\S+\.c): ", body[0])
            result(bool(m), "%s: the C example names its file (/* NAME.c: ...)" % section)
            if m:
                with open(os.path.join(work, m.group(1)), "w") as f:
                    f.write("\n".join(body) + "\n")
            continue
        if info == "sh" and marker and marker.startswith("script"):
            want = marker.split("prints ", 1)[1]
            path = os.path.join(work, "script%d.sh" % count)
            with open(path, "w") as f:
                f.write(sub("\n".join(body)) + "\n")
            try:
                r = subprocess.run(["bash", path], cwd=work, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=TIMEOUT, start_new_session=True)
                out, st = r.stdout.decode(errors="replace"), r.returncode
            except subprocess.TimeoutExpired as e:
                out, st = (e.stdout or b"").decode(errors="replace"), "timeout"
            result(st == 0, "%s: the script ends, status 0 (got %s)" % (section, st),
                   out.split("\n")[-15:] if st != 0 else ())
            found = any(re.search(want, l) for l in out.split("\n"))
            result(found, "%s: the script prints /%s/" % (section, want),
                   () if found else out.split("\n")[-15:])
            continue
        if info or not body or not body[0].startswith("$ "):
            continue
        compare = marker is None
        cmd, want = None, []
        for line in body + ["$ "]:
            if not line.startswith("$ "):
                want.append(line)
                continue
            if cmd is not None:
                got, st = sh.run(sub(cmd))
                if got is None:
                    result(False, "%s: $ %s (%s)" % (section, cmd, st))
                    raise SystemExit
                if compare:
                    w = [mask(sub(l)) for l in want]
                    g = [mask(l) for l in got if not JOB.match(l)]
                    detail = []
                    if w != g:
                        detail = ["guide: " + l for l in w] + ["got:   " + l for l in g]
                    result(w == g, "%s: $ %s" % (section, cmd), detail)
            cmd, want = line[2:], []
            if cmd == "":
                break
except SystemExit:
    pass
finally:
    sh.close()
print("1..%d" % count)
sys.exit(1 if failed else 0)
