# SPDX-License-Identifier: GPL-2.0
"""The harness's Python side: the series model and the configure step.

Imported by harness/series (make series, make series-check) and
harness/lint (make lint):

  series_entries()    the parts of `series`, in order
  parse_split()       harness/data/series-split: the cover letter and the patches
  plan(all_parts)     the patches to write: [(subject, [parts], body)]
  files_of(part)      the repo files of an overlay part, as harness/build takes them
  configure(...)      a kernel config: configure_kernel of harness/lib.sh
  step, die, run, git the harness's output and process helpers

Paths: TOP (the repo), B (build/), LINUX (build/linux), LOGS (build/logs).
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True     # no harness/__pycache__ from importing this

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
B = os.path.join(TOP, 'build')
LINUX = os.path.join(B, 'linux')
LOGS = os.path.join(B, 'logs')
SPLIT = os.path.join(HERE, 'data', 'series-split')


# Messages are signed with the script's name: harness/series, harness/lint.
PROG = os.path.relpath(os.path.abspath(sys.argv[0]), TOP) if sys.argv and sys.argv[0] else 'harness'


def die(msg):
    print('%s: %s' % (PROG, msg), file=sys.stderr)
    sys.exit(1)


def step(tag, msg):
    print('  %-7s %s' % (tag, msg), flush=True)


def run(cmd, cwd=None, env=None, input=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, input=input,
                       capture_output=True, text=True)
    if check and r.returncode != 0:
        die('%s failed:\n%s%s' % (' '.join(cmd), r.stdout, r.stderr))
    return r


def git(*args, **kw):
    return run(['git', '-C', LINUX] + list(args), **kw).stdout.strip()


def series_entries():
    """The parts of the file `series`, in order: what the "ours" kernel
    is made of (harness/build reads the same file)."""
    out = []
    for line in open(os.path.join(TOP, 'series')):
        line = line.split('#', 1)[0].strip()
        if line:
            out.append(line)
    return out


def parse_split():
    """[(kind, subject, [parts], body)] in file order."""
    blocks = []
    cur = None
    for n, line in enumerate(open(SPLIT), 1):
        line = line.rstrip('\n')
        if line.startswith('#'):
            continue
        m = re.match(r'^(cover|patch):\s*(.+)$', line)
        if m:
            cur = [m.group(1), m.group(2).strip(), [], []]
            blocks.append(cur)
            continue
        if cur is None:
            if line.strip():
                die('%s:%d: text before the first "cover:" or "patch:"' % (SPLIT, n))
            continue
        m = re.match(r'^part:\s*(\S+)\s*$', line)
        if m:
            cur[2].append(m.group(1))
        else:
            cur[3].append(line)
    out = []
    for kind, subj, parts, body in blocks:
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        out.append((kind, subj, parts, '\n'.join(body)))
    covers = [b for b in out if b[0] == 'cover']
    if len(covers) != 1:
        die('%s: needs exactly one "cover:" block' % SPLIT)
    seen = {}
    for b in out:
        for p in b[2]:
            if p in seen:
                die('%s: part %s is in two patches ("%s", "%s")' % (SPLIT, p, seen[p], b[1]))
            seen[p] = b[1]
    return covers[0], [b for b in out if b[0] == 'patch']


def files_of(part):
    """The repo files of an overlay part, as harness/build lists them."""
    if not os.path.exists(os.path.join(TOP, part)):
        die('%s names %s, which does not exist' % (SPLIT, part))
    r = run(['git', '-C', TOP, 'ls-files', '-co', '--exclude-standard', '--', part])
    return [f for f in r.stdout.split('\n') if f]


STAGES = 'patches/stages/'


def is_stage(part):
    """A stage: a patch to our own files that the series applies where
    the change it makes lands; the files before it are the repo's with
    it reversed (harness/series).  harness/build never applies one."""
    return part.startswith(STAGES)


def resolve(pattern, entries, all_parts):
    """The part a "part:" pattern names: among the series' entries, or
    (ALL_PARTS, or a stage) also among the repo's paths; None when there
    is none."""
    m = [e for e in entries if fnmatch.fnmatchcase(e, pattern)]
    if not m and (all_parts or is_stage(pattern)):
        m = sorted(os.path.relpath(p, TOP) for p in glob.glob(os.path.join(TOP, pattern)))
    if len(m) > 1:
        die('%s: "part: %s" matches %s' % (SPLIT, pattern, ' '.join(m)))
    return m[0] if m else None


def plan(all_parts, quiet=False):
    """[(subject, [parts], body)] of the patches to write, and the cover."""
    cover, patches = parse_split()
    entries = series_entries()
    take = []
    mapped = set()
    for _, subj, pats, body in patches:
        have, missing = [], []
        for pat in pats:
            p = resolve(pat, entries, all_parts)
            if p is None:
                missing.append(pat)
                if all_parts:
                    die('%s: "part: %s" names nothing in the repo' % (SPLIT, pat))
            else:
                have.append(p)
                mapped.add(p)
        if not have:
            quiet or step('SKIP', '"%s": none of its parts is in `series`' % subj)
            continue
        if missing and not quiet:
            step('PART', '"%s": without %s (not in `series`)' % (subj, ' '.join(missing)))
        take.append((subj, have, body))
    unmapped = [e for e in entries if e not in mapped]
    if unmapped:
        die('parts of `series` that harness/data/series-split puts in no patch: ' +
            ' '.join(unmapped))
    return cover, take


def configure(src, obj, log, frags):
    """tinyconfig + FRAGS + olddefconfig in OBJ (configure_kernel of
    harness/lib.sh, the one place the sequence is written); OBJ/.config
    rewritten only when it changes, nothing redone when nothing it depends
    on changed.  The make output is appended to LOG.  Returns (fatal,
    error): (True, msg) when configuring failed, (False, msg) when options
    of the fragments were lost to unmet dependencies, (False, None) when
    all is well."""
    r = subprocess.run(['bash', '-c', '. "$0" && { configure_kernel "$@"; rc=$?; '
                        'echo "unset:$kconfig_unset"; exit $rc; }',
                        os.path.join(HERE, 'lib.sh'), src, obj, log] + list(frags),
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    unset = lines[-1][len('unset:'):].split() if lines and lines[-1].startswith('unset:') else []
    for line in lines[:-1]:
        print(line, flush=True)     # SKIP: an option this tree has no Kconfig for
    if r.returncode == 0:
        return False, None
    if r.returncode == 1:
        return False, 'options not set (unmet dependencies?): ' + ' '.join(unset)
    return True, 'configuring failed (%s)' % (r.stderr.strip() or 'see %s' % log)
