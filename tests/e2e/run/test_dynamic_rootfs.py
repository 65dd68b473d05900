"""Debian's dynamically linked userland under trapline behaves as it does natively (issue 14).

Each case is a script run by the rootfs's own bash or dash, on the Debian 12 rootfs of its
arch (debian_rootfs.py), once under ``trapline run --rootfs`` and once natively chrooted
into the same folder (native_oracle.py); stdout, stderr and the exit status must be the
same bytes. A script strings several programs together so that one run covers pipelines,
subshells, exec of other dynamic programs, exit statuses, the stderr of failing commands
and float formatting, and the suite stays short. Scripts write only under /tmp (trapline's
overlay; a private tmpfs natively) and sort whatever the host's readdir order would leak.

The host's own x86-64 programs (trapline's default root, read-only) are compared with
their native runs at the end.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.native_oracle import run_host, run_in_rootfs
from tests.e2e.rootfs_variants import EXTRA_DIR, linked_copy, remove_paths
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

# A tar archive's bytes must not depend on the host: fixed order, owners and times.
TAR_FIXED = "--sort=name --owner=0 --group=0 --numeric-owner --mtime=@1609556645"


@dataclass(frozen=True)
class Case:
    id: str
    shell: str
    script: str
    status: int = 0
    stdin: bytes = b""


CASES = (
    Case("coreutils-text", "/bin/bash", r"""
        printf 'pear 3\napple 10\nfig 7\napple 10\nkiwi 2\n' > /tmp/f
        sort /tmp/f | uniq -c; sort -k2,2n -t' ' /tmp/f | head -n 2; wc -l -w -c < /tmp/f
        cut -d' ' -f1 /tmp/f | tr a-z A-Z | tac; seq 3 3 12 | paste -sd+; expr 7 \* 6
        printf '%s|%5.2f|%-4d|%x|%o|%e\n' word 3.14159 42 255 8 12345.678
        md5sum /tmp/f; sha256sum < /tmp/f; od -An -c -N 8 /tmp/f; basename /a/b/c.txt .txt
        date -u -d @1609556645 '+%Y-%m-%d %H:%M:%S %A %j'; numfmt --to=iec 1048576
    """),
    Case("coreutils-files-and-ids", "/bin/bash", r"""
        stat -c '%A %U %G %s %N' /etc/passwd /etc/group /usr/bin/awk; ls -d /usr/lib/*-linux-gnu
        stat -c '%n %s %a %U %G %Y' /etc/hosts /bin; id; id -un user; id nobody
        mkdir -p /tmp/d/e && touch -d @0 /tmp/d/e/x && ls -l --time-style=+%s /tmp/d/e
        cp /etc/hosts /tmp/d/h && ln -s h /tmp/d/l && readlink /tmp/d/l && du -b /tmp/d/h
        env -i A=1 /usr/bin/env; nproc >/dev/null && echo nproc ok; getent passwd user
    """),
    Case("failing-commands", "/bin/bash", r"""
        ls /nonexistent; echo "ls: $?"; cat /etc/shadow-missing; echo "cat: $?"
        mkdir /tmp; echo "mkdir: $?"; rm /; echo "rm: $?"; sort --bogus; echo "sort: $?"
        false; echo "false: $?"; no-such-command; echo "missing: $?"; /etc/passwd; echo "noexec: $?"
        test 1 -gt 2 || exit 42
    """, status=42),
    Case("grep-sed-awk", "/bin/bash", r"""
        grep -c nologin /etc/passwd; grep -E '^(root|user):' /etc/passwd | cut -d: -f1,7
        grep -P '^\w+:x:(\d{4}):' -o /etc/passwd; grep -n -i ROOT /etc/group; grep -q zz /etc/passwd; echo "q: $?"
        sed -n 's/^\([a-z]*\):x:\([0-9]*\):.*/\2 \1/p' /etc/passwd | sort -n
        sed -E 's/(l+)/[\1]/g; 3q' /etc/hosts; printf 'a\nb\nc\n' | sed '2i inserted' | sed '$d'
        awk -F: '$3 >= 1000 { print $1, $3 * 1.5 } END { printf "%.6f %e %g %d\n", 1/3, 2^70, 1e-5, 7/2 }' /etc/passwd
        awk 'BEGIN { for (i = 1; i <= 5; i++) s += sqrt(i); printf "%.12f %.3f %s\n", s, exp(1), 0.1 + 0.2;
                     n = split("c b a", parts); asort(parts); print parts[1] parts[2] parts[3], length("héllo") }'
        echo 'x y z' | gawk '{ print toupper($2), NF, substr($0, 3) }'
    """),
    Case("tar-gzip-xz", "/bin/bash", fr"""
        mkdir -p /tmp/t/sub && printf 'one\n' > /tmp/t/a && seq 1 5000 > /tmp/t/sub/b && ln -s a /tmp/t/l
        cd /tmp && tar -cf t.tar {TAR_FIXED} t && tar -tvf t.tar && sha256sum t.tar
        gzip -n -9 -c t.tar > t.tar.gz && gzip -l t.tar.gz | tail -n 1 && gunzip -c t.tar.gz | cmp - t.tar && echo gz ok
        xz -c t.tar > t.tar.xz && xz -dc t.tar.xz | sha256sum && xz -l t.tar.xz >/dev/null && echo xz ok
        tar -czf t2.tgz {TAR_FIXED} t && mkdir x && tar -xzf t2.tgz -C x && diff -r t x/t && echo untar-gz ok
        tar -cJf t3.txz {TAR_FIXED} t && tar -tJf t3.txz | sort; bzip2 2>/dev/null; gzip -d nothing.gz; echo "gz: $?"
    """),
    Case("findutils-diffutils", "/bin/bash", r"""
        find /etc -name '*.conf' | sort; find /usr/share/doc/bash -type f -size +1k | sort | xargs wc -c
        find /etc/alternatives -type l -printf '%f -> %l\n' | sort
        find /etc -maxdepth 1 -name 'pass*' -exec wc -l {} \; ; find /nope; echo "find: $?"
        printf 'a\nb\nc\nd\n' > /tmp/1; printf 'a\nB\nc\nd\ne\n' > /tmp/2
        diff /tmp/1 /tmp/2; echo "diff: $?"; diff -u /tmp/1 /tmp/2 | tail -n +3; cmp /tmp/1 /tmp/2; echo "cmp: $?"
        diff -q /tmp/1 /tmp/1; echo "same: $?"; diff3 /tmp/1 /tmp/2 /tmp/1 | head -3; sdiff -w 20 /tmp/1 /tmp/2
        echo "sdiff: $?"
    """),
    Case("bash-processes", "/bin/bash", r"""
        set -o pipefail; false | true; echo "pipefail: $?"; true | (exit 3) | cat; echo "${PIPESTATUS[*]}"
        x=$(echo outer; (echo inner; exit 4); echo "sub: $?"); echo "$x"
        { echo group; ls /nope 2>&1; } | sort; trap 'echo trapped EXIT' EXIT
        sleep 0 & wait $!; echo "bg: $?"; (sleep 0; exit 9) & wait $!; echo "bg9: $?"
        f() { local n=$1; (( n <= 1 )) && { echo 1; return; }; echo $(( n * $(f $((n - 1))) )); }; f 10
        cat <<EOF | tr a-z A-Z
        heredoc $((6 * 7)) $(dash -c 'echo from dash')
        EOF
        arr=(b a c); IFS=$'\n' sorted=($(sort <<<"${arr[*]}")); echo "${sorted[*]}"; echo ${#arr[@]}
        exec 3>/tmp/fd3; echo via fd3 >&3; exec 3>&-; cat /tmp/fd3; printf '%.3f\n' 2.5; exit 7
    """, status=7),
    Case("dash-processes", "/bin/dash", r"""
        echo "dash $$" >/dev/null; a=$(printf '%s ' 1 2 3); echo "[$a]"; (cd /etc && pwd); pwd
        for f in passwd group hosts; do wc -l < /etc/$f; done | paste -sd' '
        case "abc" in a*) echo matched;; esac; i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i
        sh -c 'exit 5'; echo "sh: $?"; bash -c 'echo "bash from dash ${BASH_VERSINFO[0]}"'
        ls /nope 2>/dev/null || echo "ls failed $?"; read line; echo "read: $line"
        sh -c 'kill -TERM $$'; echo "killed: $?"; sh -c 'echo to stderr >&2; exit 6'
    """, status=6, stdin=b"from stdin\n"),
    Case("bc", "/bin/bash", r"""
        echo 'scale=30; 1/7; sqrt(2); 2^100; -7 % 3' | bc; echo 'scale=20; e(1); 4*a(1); l(10); s(1); c(1)' | bc -l
        echo 'define f(n) { if (n < 2) return n; return f(n-1) + f(n-2); }; f(20)' | bc; echo '1/0' | bc; echo "bc: $?"
        echo 'obase=16; 255; ibase=2; 1010' | bc
    """),
    Case("jq", "/bin/bash", r"""
        jq -c '.items | map(select(.n > 1)) | sort_by(.name) | map(.name)' <<<'{"items":[{"name":"b","n":2},{"name":"a","n":3},{"name":"c","n":1}]}'
        jq -n '[range(5)] | {sum: add, avg: (add / length), big: (1e300 * 1e10), tiny: 1e-320, pi: 3.141592653589793}'
        jq -r '.[] | @base64, ascii_upcase' <<<'["hello","json"]'; jq -n '"a,b" | split(",") | join("-")'
        jq '.a.b' <<<'{"a":5}'; echo "jq: $?"; jq . <<<'{bad'; echo "parse: $?"; jq -n 'error("boom")'; echo "err: $?"
        jq -n --arg x 1.5 '$x | tonumber * 2'; jq -n '[limit(3; repeat(1))] | length'
        jq -n '"\u00e9" | test("\\w")'
    """),
    Case("sqlite3", "/bin/bash", r"""
        sqlite3 :memory: "create table t(k text, v real); insert into t values ('a', 1.5), ('b', 2.25), ('a', 3);
          select k, sum(v), printf('%.4f', avg(v)), count(*) from t group by k order by k;
          select 1.0/3, 2e100, round(2.675, 2), typeof(1/2), hex('é');
          with recursive n(i) as (select 1 union all select i + 1 from n where i < 5) select group_concat(i) from n;"
        sqlite3 /tmp/db "create table x(y); insert into x values (42);" && sqlite3 -header -column /tmp/db "select y, y*2 as z from x"
        sqlite3 :memory: "select * from missing"; echo "sqlite: $?"
    """),
    Case("perl", "/bin/bash", r"""
        perl -e 'my %h = (b => 2, a => 1, c => 3); print join(",", map { "$_=$h{$_}" } sort keys %h), "\n";
                 printf "%.10f %e %g %s\n", 4 * atan2(1, 1), 1e21, 0.0001, 0.1 + 0.2; print 2**53 + 1, " ", 7 / 2, "\n"'
        perl -MList::Util=sum,max,first -MPOSIX=floor,strftime -e 'print sum(1..100), " ", max(3, 9, 2), " ", floor(-2.5), " ",
                 strftime("%Y-%m-%d", gmtime(1609556645)), "\n"'
        perl -ne 'print if /^(root|user):/ && s/:x:/ => /' /etc/passwd; perl -e 'die "dying\n"'; echo "die: $?"
        perl -e 'my $p = open(my $fh, "-|", "echo", "child") or die; print "got: ", <$fh>; exit 3'; echo "exit: $?"
        echo 'a1b22c333' | perl -pe 's/(\d+)/<$1>/g'; perl -e 'use Fcntl; print O_CREAT > 0 ? "fcntl\n" : ""'
    """),
    Case("nss-iconv-locale", "/bin/bash", r"""
        getent group users nogroup; getent passwd 0 65534; getent hosts localhost; id -Gn user
        printf 'caf\xc3\xa9\n' | iconv -f UTF-8 -t UTF-16LE | od -An -tx1; printf 'caf\xe9\n' | iconv -f LATIN1 -t UTF-8
        printf 'x\n' | iconv -f UTF-8 -t NOSUCH; echo "iconv: $?"; LC_ALL=C.UTF-8 printf '%s\n' "$(echo é | wc -m)"
        printf 'caf\xc3\xa9 \xe2\x82\xac\n' | iconv -f UTF-8 -t CP1252 | od -An -tx1
        echo ABC | iconv -f ASCII -t EBCDIC-US | od -An -tx1; echo 'x+ yy' | grep -oP '\w\+|y{2}'
    """),
    Case("scripts-and-loader-env", "/bin/bash", r"""
        printf '#!/bin/bash\necho "bash script $# $1"\n' > /tmp/s1
        printf '#!/usr/bin/perl -l\nprint "perl script @ARGV"\n' > /tmp/s2
        printf '#!/bin/sh\nexec /tmp/s1 via-sh "$@"\n' > /tmp/s3; chmod +x /tmp/s1 /tmp/s2 /tmp/s3
        /tmp/s1 a b; /tmp/s2 x y; /tmp/s3; echo "scripts: $?"; env /tmp/s2 | xargs -n 1 echo
        LD_BIND_NOW=1 jq -n '1 + 1'; LD_LIBRARY_PATH=/tmp/nowhere:/usr/lib expr 2 + 3
        mkdir /tmp/lib && cp -L /usr/lib/*-linux-gnu/libonig.so.5 /tmp/lib/
        LD_LIBRARY_PATH=/tmp/lib jq -n '"ld_library_path"'
    """),
    # Beyond the named packages: dpkg and debianutils of the closure, libc-bin's getconf and
    # locale, coreutils' stdbuf (LD_PRELOAD of libstdbuf.so), timeout (timers, SIGKILL).
    Case("more-debian-tools", "/bin/bash", r"""
        dpkg --print-architecture; dpkg --compare-versions 1.2-1 lt 1.10-1 && echo "versions ok"
        which ls gawk; getconf LONG_BIT; getconf PAGE_SIZE; locale | head -3
        seq 1 20 | shuf --random-source=/etc/passwd | head -3; factor 1234567890123 4294967297
        printf 'b c\na b\n' | tsort; echo hello | base64 | base64 -d; echo abc | sha1sum
        stdbuf -oL printf 'line buffered via LD_PRELOAD\n'; timeout 5 sleep 0.1; echo "timeout: $?"
        (timeout -s KILL 0.2 sleep 5; echo "killed: $?") 2>/dev/null; nice -n 5 nice
        printf '%s\n' 1 2 3 4 | split -l 2 - /tmp/sp && cat /tmp/spab
        seq 1 10 | xargs -P 2 -n 3 echo | sort; seq 5 | tac | sort -n | paste -sd,
    """),
)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_debian_userland_matches_native(arch, case, debian_rootfs):
    root = debian_rootfs[arch]
    argv = [case.shell, "-c", textwrap.dedent(case.script)]
    native = run_in_rootfs(argv, root=root, env=FIXED_ENV, stdin=case.stdin)
    check_native_oracle(native, case.status)
    sandbox = run_sandbox(argv, rootfs=root, env=FIXED_ENV, clear_env=True, stdin=case.stdin,
                          timeout=300)
    assert_same_behaviour(sandbox, native)


@pytest.mark.parametrize("arch", ARCHES)
def test_missing_library_gives_ld_so_message_and_127(arch, debian_rootfs, tmp_path):
    root = linked_copy(debian_rootfs[arch], tmp_path / "root")
    libdir = "x86_64-linux-gnu" if arch == "amd64" else "i386-linux-gnu"
    remove_paths(root, [f"/usr/lib/{libdir}/libonig.so.5"])
    argv = ["/usr/bin/jq", "-n", "1"]
    native = run_in_rootfs(argv, root=root, env=FIXED_ENV)
    check_native_oracle(native, 127)
    sandbox = run_sandbox(argv, rootfs=root, env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)


@pytest.mark.parametrize("arch", ARCHES)
def test_ld_so_run_directly(arch, debian_rootfs):
    interpreter = "/lib64/ld-linux-x86-64.so.2" if arch == "amd64" else "/lib/ld-linux.so.2"
    argv = [interpreter, "/usr/bin/expr", "6", "*", "7"]
    native = run_in_rootfs(argv, root=debian_rootfs[arch], env=FIXED_ENV)
    check_native_oracle(native, 0)
    sandbox = run_sandbox(argv, rootfs=debian_rootfs[arch], env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)


HOST_CASES = (
    ("ls", ["/bin/ls", "-l", "--time-style=+%s", "."]),
    ("sort", ["/bin/sort", "-k2,2n", "-t", " ", "data.txt"]),
    ("sh-pipeline", ["/bin/sh", "-c",
                     "sort data.txt | uniq -c | sort -rn | head -n 2; ls nope; echo $?; exit 3"]),
)


@pytest.mark.parametrize("name,argv", HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_host_programs_match_native(name, argv, tmp_path):
    # The host's own dynamically linked x86-64 programs, on trapline's default root (the
    # host's /, read-only): only the working folder is ours.
    (tmp_path / "data.txt").write_text("pear 3\napple 10\nfig 7\napple 10\nkiwi 2\n")
    (tmp_path / "sub").mkdir()
    native = run_host(argv, cwd=str(tmp_path), env=FIXED_ENV)
    sandbox = run_sandbox(argv, rootfs=None, cwd=str(tmp_path), env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)


DYN_SAMPLES = ("hello", "dlopen_cos", "tls", "interpose", "malloc_count", "strlen_calls",
               "cxx_throw")
EXPECTED_DIR = Path(__file__).resolve().parents[3] / "samples" / "dyn" / "expected"


@pytest.mark.parametrize("variant", ["", "-pie"], ids=["non-pie", "pie"])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_dynamic_samples_print_their_expected_output(arch, variant, dyn_samples_rootfs):
    # One bash runs every sample in turn: a dynamic shell exec'ing dynamic programs, each
    # with its own ld.so start-up (dlopen, TLS in a RUNPATH library, threads, symbol
    # interposition, libstdc++).
    script = "".join(f'echo "== {n}"; /{EXTRA_DIR}/{n}{variant}; echo "status $?"\n'
                     for n in DYN_SAMPLES)
    expected = b"".join(b"== %s\n%sstatus 0\n" % (n.encode(), (EXPECTED_DIR / f"{n}.out").read_bytes())
                        for n in DYN_SAMPLES)
    root = dyn_samples_rootfs(arch)
    native = run_in_rootfs(["/bin/bash", "-c", script], root=root, env=FIXED_ENV)
    check_native_oracle(native, 0)
    assert native.stdout == expected, native.describe()
    sandbox = run_sandbox(["/bin/bash", "-c", script], rootfs=root, env=FIXED_ENV,
                          clear_env=True, timeout=300)
    assert_same_behaviour(sandbox, native)
