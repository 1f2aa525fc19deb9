#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mutate.py - mutation testing of memcgfs (run on demand, not in CI).

Each mutant is a one-line change a real edit could make (a boundary moved,
a condition dropped, a field swapped) in alloc/, memcg/, fs/ or the control
protocol.  The tree is copied (git ls-files, with uncommitted edits) into a
scratch directory and built once; then for each mutant its one line is
changed, the build is brought up to date, and the tests named for it run
(--full: the unit and integration suites whole).  A mutant is killed when
a test fails, survives when they all pass (one that does not build is
reported invalid and left out of the score).  The
baseline runs first and must pass.

  test/mutate/mutate.py [--full] [--only N,M,...] [--keep DIR]

Prints one line per mutant and "mutation score: KILLED/TOTAL (P%)".  The
named tests are those written to catch each kind of change; --full can only
kill more.  About 20-60 s a mutant with named tests on an idle 2-CPU
machine; --full takes minutes each.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# (file, tests, the exact text of the line's change: old, new)
MUTANTS = [
    # ---- alloc/ ----
    ("alloc/slub.c", "alloc", "\t    n->nr_partial >= s->min_partial) {", "\t    n->nr_partial > s->min_partial) {"),
    ("alloc/slub.c", "alloc", "\tif (!slab->inuse && n->nr_partial >= s->min_partial)\n", "\tif (!slab->inuse && n->nr_partial > s->min_partial)\n"),
    ("alloc/slub.c", "alloc", "\t\tif (!slab->inuse && n->nr_partial >= s->min_partial) {", "\t\tif (!slab->inuse && n->nr_partial > s->min_partial) {"),
    ("alloc/page_alloc.c", "alloc", "\tfor (o = order; o <= MAX_PAGE_ORDER; o++) {", "\tfor (o = order; o < MAX_PAGE_ORDER; o++) {"),
    ("alloc/page_alloc.c", "alloc", "\twhile (order < MAX_PAGE_ORDER) {", "\twhile (order + 1 < MAX_PAGE_ORDER) {"),
    ("alloc/kmalloc.c", "alloc", "\tif (size > KMALLOC_MAX_CACHE_SIZE)\n\t\treturn NR_KMALLOC_INDEX;", "\tif (size >= KMALLOC_MAX_CACHE_SIZE)\n\t\treturn NR_KMALLOC_INDEX;"),
    # ---- memcg/ ----
    ("memcg/page_counter.c", "memcg limits", "\t\tif ((unsigned long)new > READ_ONCE(c->max)) {", "\t\tif ((unsigned long)new >= READ_ONCE(c->max)) {"),
    ("memcg/stock.c", "memcg limits", "\tif (nr_pages > memcg_cfg.charge_batch || !alloc_cpu_trylock(&st->lock, cpu))\n", "\tif (nr_pages >= memcg_cfg.charge_batch || !alloc_cpu_trylock(&st->lock, cpu))\n"),
    ("memcg/stock.c", "limits", "\tif (nr_reclaimed && nr_pages <= (1u << PAGE_ALLOC_COSTLY_ORDER))", "\tif (nr_reclaimed && nr_pages < (1u << PAGE_ALLOC_COSTLY_ORDER))"),
    ("memcg/high.c", "limits", "\tif (penalty <= HZ / 100) {", "\tif (penalty < HZ / 100) {"),
    ("memcg/high.c", "limits", "\treturn penalty * nr_pages / MEMCG_CHARGE_BATCH;", "\treturn penalty * nr_pages / (MEMCG_CHARGE_BATCH / 2);"),
    ("memcg/reclaim.c", "limits", "\treturn m != root && READ_ONCE(m->memory.emin) >= page_counter_read(&m->memory) &&", "\treturn m != root && READ_ONCE(m->memory.emin) > page_counter_read(&m->memory) &&"),
    ("memcg/reclaim.c", "limits", "\treturn inactive * ratio < active;", "\treturn inactive * ratio <= active;"),
    ("memcg/reclaim.c", "limits", "\t\tif (page->flags & PAGE_FLAG_REFERENCED) {", "\t\tif (0 && (page->flags & PAGE_FLAG_REFERENCED)) {"),
    ("memcg/reclaim.c", "limits", "\t\tstruct page *page = l->tail[LRU_ACTIVE_FILE];", "\t\tstruct page *page = l->head[LRU_ACTIVE_FILE];"),
    ("memcg/lru.c", "limits", "\t\t__lru_add(&memcg->lru[nid], page, lru + 1);", "\t\t__lru_add(&memcg->lru[nid], page, lru);"),
    ("memcg/memcontrol.c", "memcg", "\tif (atomic_fetch_sub_explicit(&memcg->refcnt, 1, memory_order_acq_rel) != 1)", "\tif (atomic_fetch_sub_explicit(&memcg->refcnt, 1, memory_order_acq_rel) != 0)"),
    ("memcg/task.c", "memcg", "\told->nr_tasks--;", "\t;"),
    ("memcg/oom.c", "limits", "\t\tif (READ_ONCE(t->exited) || t->oom_round == round || READ_ONCE(t->unkillable))", "\t\tif (READ_ONCE(t->exited) || READ_ONCE(t->unkillable))"),
    ("memcg/oom.c", "limits", "\t\tif (adj <= OOM_SCORE_ADJ_MIN)", "\t\tif (adj < OOM_SCORE_ADJ_MIN)"),
    ("memcg/memory_files.c", "limits", "\t\tif (signal_pending())\n", "\t\tif (0)\n"),
    ("memcg/memory_files.c", "limits", "\t\t\tif (kstrtoint0(tok + 11, &v) || v < 0 || v > 200)", "\t\t\tif (kstrtoint0(tok + 11, &v) || v < 0 || v > 201)"),
    # ---- fs/ ----
    ("fs/rootfiles.c", "throttle", "\tif (memcg_owe_over_high(p->task))", "\tif (0 && memcg_owe_over_high(p->task))"),
    ("fs/defer.c", "reclaim", "\tif (d && d->work) {\n\t\t/* its thread replies once it stopped */\n\t\tatomic_store(&d->stop, true);", "\tif (d && d->work) {\n\t\t/* its thread replies once it stopped */\n\t\t;"),
    ("fs/notify.c", "notify", "#define COALESCE_NS\t(10 * NSEC_PER_MSEC)", "#define COALESCE_NS\t(0 * NSEC_PER_MSEC)"),
    ("fs/procs.c", "procs", "\tif (dst->frozen && !p->stopped && !pidfd_send_signal(p->pidfd, SIGSTOP))", "\tif (dst->freeze && !p->stopped && !pidfd_send_signal(p->pidfd, SIGSTOP))"),
    ("fs/tree.c", "tree files", "\t\tif (a->nr_descendants >= (unsigned int)a->max_descendants || level >= a->max_depth) {", "\t\tif (a->nr_descendants > (unsigned int)a->max_descendants || level >= a->max_depth) {"),
    ("fs/ops.c", "tree files", "\tif (h->cg->removed)\n\t\treturn true;", "\tif (0)\n\t\treturn true;"),
    # ---- the control protocol ----
    ("fs/ctl/ctl.c", "ctl", "\t\t\tif (!l || l > CTL_SITE_LEN)", "\t\t\tif (!l || l >= CTL_SITE_LEN)"),
    ("fs/ctl/ctl.c", "ctl", "\tif (len > CTL_REQUEST_MAX)\n", "\tif (len > CTL_REQUEST_MAX + 1)\n"),
    ("fs/ctl/ctl.c", "ctl", "\t\t\tif (parse_u64(w + 1, &v) || v < 1 || v > CTL_MAX_COUNT)", "\t\t\tif (parse_u64(w + 1, &v) || v < 1 || v >= CTL_MAX_COUNT)"),
    ("fs/ctl/batch.c", "ctl", "\t       n <= b->words - slot;", "\t       n <= b->words - slot + 1;"),
    ("fs/ctl/handles.c", "ctl", "\t\tif (uid != 0 && h->uid != (uint32_t)uid) {", "\t\tif (h->uid != (uint32_t)uid) {"),
    ("fs/ctl/handles.c", "ctl", "\t\t\t\ttwice |= tokens[j] == tokens[i];", "\t\t\t\ttwice |= false;"),
    ("client/batch.c", "client", "\tif (op_allocates(op->op) && (op->count > MEMCGFS_CTL_MAX_COUNT || !op->handles))", "\tif (op_allocates(op->op) && (op->count >= MEMCGFS_CTL_MAX_COUNT || !op->handles))"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def main():
    args = sys.argv[1:]
    full = "--full" in args
    only = None
    keep = None
    if "--only" in args:
        only = {int(x) for x in args[args.index("--only") + 1].split(",")}
    if "--keep" in args:
        keep = args[args.index("--keep") + 1]
    src = run(["git", "rev-parse", "--show-toplevel"]).stdout.strip()
    scratch = keep or tempfile.mkdtemp(prefix="memcgfs-mutate.")
    tree = os.path.join(scratch, "src")
    build = os.path.join(scratch, "build")
    files = run(["git", "-C", src, "ls-files", "-z"]).stdout.split("\0")
    for f in files:
        if f and os.path.isfile(os.path.join(src, f)):
            os.makedirs(os.path.dirname(os.path.join(tree, f)) or tree, exist_ok=True)
            shutil.copy2(os.path.join(src, f), os.path.join(tree, f))
    # every mutant's text must be there exactly once
    for i, (f, _, old, _) in enumerate(MUTANTS, 1):
        n = open(os.path.join(tree, f)).read().count(old)
        if n != 1:
            sys.exit(f"mutant {i} ({f}): its text is found {n} times, not once")
    if not os.path.isdir(build):
        r = run(["meson", "setup", build, tree, "-Dfuzz=disabled"])
        if r.returncode:
            sys.exit("meson setup failed:\n" + r.stdout)
    r = run(["meson", "compile", "-C", build])
    if r.returncode:
        sys.exit("the baseline does not build:\n" + r.stdout[-3000:])

    def tests_of(names):
        if full:
            return ["--suite", "unit", "--suite", "integration"]
        return names.split()

    wanted = sorted({t for _, names, _, _ in MUTANTS for t in names.split()})
    r = run(["meson", "test", "-C", build, "--no-rebuild", "-q"] + (tests_of("") if full else wanted))
    if r.returncode:
        sys.exit("the baseline's tests fail:\n" + r.stdout[-3000:])
    print(f"baseline: {' '.join(wanted) if not full else 'unit and integration suites'} pass")
    killed = total = 0
    for i, (f, names, old, new) in enumerate(MUTANTS, 1):
        if only and i not in only:
            continue
        path = os.path.join(tree, f)
        orig = open(path).read()
        open(path, "w").write(orig.replace(old, new, 1))
        try:
            b = run(["meson", "compile", "-C", build])
            if b.returncode:
                verdict = "invalid (build)"	# not counted: fix the mutant
            else:
                t = run(["meson", "test", "-C", build, "--no-rebuild", "-q"] + tests_of(names))
                verdict = "killed" if t.returncode else "SURVIVED"
        finally:
            open(path, "w").write(orig)
        if not verdict.startswith("invalid"):
            total += 1
            killed += verdict.startswith("killed")
        line = old.strip().splitlines()[0][:60]
        print(f"{i:2d} {verdict:15s} {f}: {line!r} [{names if not full else 'full'}]", flush=True)
    run(["meson", "compile", "-C", build])
    pct = 100.0 * killed / total if total else 0.0
    print(f"mutation score: {killed}/{total} ({pct:.0f}%)")
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if pct >= 90 else 1


if __name__ == "__main__":
    sys.exit(main())
