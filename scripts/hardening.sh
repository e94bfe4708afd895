#!/usr/bin/env bash
# Hostile inputs through the real binary (release build): every class of malformed JSON, byte order marks, NUL
# bytes, CRLF and blank lines, 100 000 and 1 000 000 levels of nesting, an object with 1 000 000 keys (also with
# keys made to collide in the duplicate check's hash), a 200 MB record, a number with 1 000 000 digits, a 20 MB
# string of escapes, 10 000 000 tiny records, 100 000 bad lines among 100 000 good ones, truncated and corrupt gzip,
# a 2 GB gzip bomb, `infer` on the million keys (its path cap), `where` expressions nested 1 000 000 deep; then the
# scaling suite
# (scripts/scaling.py: every feature family at n and 16n, in both engines, failing above 48x). Inputs are
# generated at run time in a temporary directory (never committed).
#
# Each case checks the exit status, standard output (byte for byte, or line counts for the big ones) and standard
# error (the rejected lines, in order, as `streammap: FILE:LINE: …` with the expected reason), and prints its time
# and peak RSS (/usr/bin/time). A case fails when a check fails or it takes more than MAX_SECONDS (60).
# Ends with `hardening: N passed, M failed`; exits 1 when a case failed.
#
#   scripts/hardening.sh              # everything (about 3 minutes on 2 cores)
#   scripts/hardening.sh --quick      # without the big inputs (200 MB, 1 000 000 keys, 10 000 000 records)
#   STREAMMAP=path/to/streammap scripts/hardening.sh   # test that binary instead of building one
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1
MAX_SECONDS=${MAX_SECONDS:-60}
MAX_TINY_RSS_MB=${MAX_TINY_RSS_MB:-100}

command -v perl >/dev/null || { echo "hardening: perl is needed to generate the inputs" >&2; exit 2; }
if [ ! -x /usr/bin/time ]; then
    echo "hardening: installing GNU time (peak RSS)" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null 2>&1 || true
fi
[ -x /usr/bin/time ] || { echo "hardening: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

if [ -n "${STREAMMAP:-}" ]; then
    BIN=$(cd "$(dirname "$STREAMMAP")" && pwd)/$(basename "$STREAMMAP")   # absolute: the cases run in a temporary directory
else
    scripts/bootstrap.sh
    swift build -c release --static-swift-stdlib --product streammap >/dev/null || { echo "hardening: the release build failed" >&2; exit 2; }
    BIN=$(swift build -c release --static-swift-stdlib --show-bin-path)/streammap
fi
echo "hardening: $BIN"

SCRIPTS=$(pwd)/scripts
T=$(mktemp -d "${TMPDIR:-/tmp}/streammap-hardening.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"   # file names in messages are relative: `streammap: malformed.ndjson:3: …`

echo '{"mapper":"identity"}' > identity.json                           # writes every record back (compact)
echo '{"fields":{"id":{"to":"id","missing":"omit"}}}' > pick.json      # keeps `id`, skips everything else

passed=0
failed=0
failures=()
case_name=""
case_errors=()

begin() { case_name=$1; case_errors=(); }
problem() { case_errors+=("$1"); }
end() {
    local info
    info=$(printf '%6.2f s %7d KB' "$SECS" "$RSS_KB")
    if [ "${SECS%.*}" -ge "$MAX_SECONDS" ]; then problem "took ${SECS} s (limit ${MAX_SECONDS} s)"; fi
    if [ ${#case_errors[@]} -eq 0 ]; then
        passed=$((passed + 1))
        printf '  ok    %-44s %s\n' "$case_name" "$info"
    else
        failed=$((failed + 1))
        failures+=("$case_name")
        printf '  FAIL  %-44s %s\n' "$case_name" "$info"
        for e in "${case_errors[@]}"; do printf '%s\n' "$e" | head -n 12 | sed 's/^/          /'; done
    fi
}

# run NAME ARGS... [< input]: runs streammap under /usr/bin/time (and a 5-minute timeout); stdout → NAME.out,
# stderr → NAME.err; sets STATUS, SECS, RSS_KB.
run() {
    local name=$1
    shift
    OUT=$T/$name.out
    ERR=$T/$name.err
    timeout 300 /usr/bin/time -f '%e %M' -o "$T/$name.time" "$BIN" "$@" > "$OUT" 2> "$ERR"
    STATUS=$?
    read -r SECS RSS_KB < <(tail -n 1 "$T/$name.time" 2>/dev/null || echo "0 0")
    [[ $SECS =~ ^[0-9.]+$ ]] || { SECS=0; RSS_KB=0; }
    if [ "$STATUS" -eq 124 ]; then problem "timed out after 300 s"; fi
    if [ "$STATUS" -gt 128 ] && [ "$STATUS" -ne 141 ]; then problem "killed by signal $((STATUS - 128))"; fi
}

expect_status() { [ "$STATUS" -eq "$1" ] || problem "exit status $STATUS, expected $1; stderr: $(head -c 600 "$ERR")"; }
expect_stdout_file() { cmp -s "$OUT" "$1" || problem "stdout differs from $(basename "$1"): $(cmp "$OUT" "$1" 2>&1 | head -n 1); got $(wc -c < "$OUT") bytes, expected $(wc -c < "$1")"; }
expect_stdout() { [ "$(cat "$OUT")" = "$1" ] || problem "stdout: $(head -c 300 "$OUT"), expected: $(printf '%s' "$1" | head -c 300)"; }
expect_stderr_empty() { [ ! -s "$ERR" ] || problem "unexpected stderr: $(head -c 600 "$ERR")"; }
expect_lines() { local n; n=$(wc -l < "$1"); [ "$n" -eq "$2" ] || problem "$(basename "$1"): $n lines, expected $2"; }
# expect_rejects FILE TSV: stderr is exactly one line per rejected record, in order: `streammap: FILE:LINE: ` and
# a message containing the expected fragment (TSV lines: LINE<TAB>FRAGMENT). No raw control bytes in stderr.
expect_rejects() {
    local report
    report=$(perl -e '
        my ($file, $tsv, $err) = @ARGV;
        open my $t, "<", $tsv or die; open my $e, "<", $err or die;
        my @want = map { chomp; [split /\t/, $_, 2] } <$t>;
        my @got = <$e>;
        my @bad;
        push @bad, scalar(@got) . " stderr lines, expected " . scalar(@want) if @got != @want;
        for my $i (0 .. $#want) {
            my ($line, $fragment) = @{$want[$i]};
            my $g = $got[$i] // "(nothing)\n";
            chomp $g;
            my $prefix = "streammap: $file:$line: ";
            push @bad, "stderr line " . ($i + 1) . ": \"$g\", expected \"$prefix…$fragment…\""
                unless index($g, $prefix) == 0 && index($g, $fragment, length $prefix) >= 0;
            last if @bad > 6;
        }
        push @bad, "raw control bytes in stderr" if join("", @got) =~ /[\x00-\x09\x0b-\x1f\x7f]/;
        print join("\n", @bad);
    ' "$1" "$2" "$ERR")
    [ -z "$report" ] || problem "$report"
}

# ---------------------------------------------------------------------------------------------------------------
echo "malformed JSON, every class: each bad record rejected with its line, every other record kept"
perl -e '
    # fragment, sample: structure, strings, escapes, numbers, literals, trailing garbage, truncation, whitespace.
    # "UTF": "invalid UTF-8 in string" (StreamMap) or "invalid bytes in UTF8 string" (yajl), whichever sees it first.
    my @cases = (
        ["invalid object key", q({"a":1,})], ["separated by a colon", q({"a" 1})], ["invalid char", q({a:1})],
        ["unallowed token", q([1,,2])], ["unallowed token", q({"a":})], ["trailing garbage", q({"a":1}})],
        ["unallowed token", q(])], ["expect \x27,\x27 or \x27}\x27", q({"a":1])],
        ["invalid character inside string", "\"a\tb\""], ["invalid character inside string", "\"a\x01b\""],
        ["UTF", "\"\xff\""], ["UTF", "\"\xc0\xaf\""],
        ["UTF", "\"\xe0\x80\x80\""], ["UTF", "\"\xed\xa0\x80\""],
        ["UTF", "\"\xf4\x90\x80\x80\""], ["UTF", "\"\xf5\x80\x80\x80\""],
        ["UTF", "\"\xe2\x82\""], ["UTF", "{\"\xc3\":1}"],
        ["occurs before a character", q("\x")], ["occurs before a character", q("\q")],
        ["non-hex", q("\u12G4")], ["non-hex", q("\u12")],
        ["lone surrogate \\uD800", q("\uD800")], ["lone surrogate \\uDC00", q("\uDC00")],
        ["lone surrogate \\uD888", q("\uD888\u1234")], ["lone surrogate \\uDBFF", q("a\uDBFF")],
        ["trailing garbage", "01"], ["after the decimal point", "1."], ["invalid char", ".5"], ["after the minus sign", "-"],
        ["after the exponent", "1e"], ["after the exponent", "1e+"], ["invalid char", "+1"], ["trailing garbage", "0x10"],
        ["trailing garbage", "-01"], ["invalid char", "NaN"], ["invalid char", "Infinity"], ["after the minus sign", "-Infinity"],
        ["invalid string", "tru"], ["invalid string", "nul"], ["invalid char", "True"], ["invalid char", "NULL"],
        ["trailing garbage", "falsey"], ["trailing garbage", "nulll"],
        ["trailing garbage", "{} x"], ["trailing garbage", "{}{}"], ["trailing garbage", "1 2"],
        ["trailing garbage", q({"a":1} //c)], ["trailing garbage", "[] ]"], ["trailing garbage", "{\"id\":1}\x00"],
        ["premature EOF", q({"a":[1,2)], ["premature EOF", q({"a":"b)], ["premature EOF", "[[[["],
        ["premature EOF", q({"a")], ["premature EOF", "{"], ["premature EOF", q("abc)],
        ["form feed", "\x0c{}"], ["vertical tab", "{}\x0b"], ["form feed", "{\"a\":\x0c1}"],
    );
    open my $in, ">", "malformed.ndjson" or die; open my $out, ">", "malformed.expected" or die;
    open my $tsv, ">", "malformed.rejects" or die;
    my $line = 0; my $id = 0;
    my $good = sub { $line++; print $in "{\"id\":$id}\n"; print $out "{\"id\":$id}\n"; $id++ };
    $good->();
    for my $c (@cases) {
        my ($fragment, $sample) = @$c;
        $line++; print $in "$sample\n"; print $tsv "$line\t$fragment\n";                 # the record itself
        $line++; print $in "{\"skip\":$sample,\"id\":-1}\n"; print $tsv "$line\tinvalid JSON\n";  # in a skipped field
        $good->();
    }
    $line++; print $in "{\"id\":"; print $tsv "$line\tpremature EOF\n";                     # last line, no newline
'
for engine in stream tree; do
    for spec in identity pick; do
        begin "malformed classes ($engine, $spec)"
        run "malformed-$engine-$spec" --spec "$spec.json" --engine "$engine" malformed.ndjson
        expect_status 1
        expect_stdout_file malformed.expected
        expect_rejects malformed.ndjson malformed.rejects
        end
    done
done

# ---------------------------------------------------------------------------------------------------------------
echo "byte order marks, NUL bytes, CRLF and blank lines"
printf '\xef\xbb\xbf{"id":1}\n\xef\xbb\xbf{"id":2}\n{"id":\xef\xbb\xbf3}\n{"id":"\xef\xbb\xbf"}\n{"id":5}\xef\xbb\xbf\n{"id":6}' > bom-a.ndjson
printf '\xef\xbb\xbf{"id":7}\n' > bom-b.ndjson
printf '2\tinvalid JSON\n3\tinvalid JSON\n5\ttrailing garbage\n' > bom.rejects
printf '{"id":1}\n{"id":"\xef\xbb\xbf"}\n{"id":6}\n{"id":7}\n{"id":8}\n' > bom.expected
for engine in stream tree; do
    begin "BOM at the start of each input, elsewhere ($engine)"
    run "bom-$engine" --spec identity.json --engine "$engine" bom-a.ndjson bom-b.ndjson - < <(printf '\xef\xbb\xbf{"id":8}\n')
    expect_status 1
    expect_stdout_file bom.expected
    # Line 2: a BOM starting a line that is not the input's first; 3: inside a record; 5: after it. A BOM inside a
    # string is a character (U+FEFF) and is kept.
    expect_rejects bom-a.ndjson bom.rejects
    end
done

printf '{"id":1}\n\x00\n{"id":2}\x00\n{"id":"a\x00b"}\n\x00{"id":3}\n{"id":"a\\u0000b"}\n{"x":\x00}\n{"id":4}\n' > nul.ndjson
printf '{"id":1}\n{"id":"a\\u0000b"}\n{"id":4}\n' > nul.expected
printf '2\tinvalid JSON\n3\ttrailing garbage\n4\tinvalid character inside string\n5\tinvalid JSON\n7\tinvalid JSON\n' > nul.rejects
for engine in stream tree; do
    begin "raw NUL bytes ($engine)"
    run "nul-$engine" --spec identity.json --engine "$engine" nul.ndjson
    expect_status 1
    expect_stdout_file nul.expected
    expect_rejects nul.ndjson nul.rejects   # also: no raw NUL echoed to the terminal
    end
done

# CRLF line ends, blank lines (empty, CR only, spaces), a CR inside a string, a CR between two values.
printf '{"id":1}\r\n\r\n\n{"id":\r\n   \n{"id":2}\r\n{"id":"x\ry"}\n\t{"id":3} \r\n{"id":4}\r{"id":5}\n\r\n\n{"id":\n{"id":6}' > crlf.ndjson
printf '{"id":1}\n{"id":2}\n{"id":3}\n{"id":6}\n' > crlf.expected
printf '4\tpremature EOF\n7\tinvalid character inside string\n9\ttrailing garbage\n12\tpremature EOF\n' > crlf.rejects
for engine in stream tree; do
    begin "CRLF and blank lines: exact line numbers ($engine)"
    run "crlf-$engine" --spec identity.json --engine "$engine" crlf.ndjson
    expect_status 1
    expect_stdout_file crlf.expected
    expect_rejects crlf.ndjson crlf.rejects
    end
    begin "CRLF from standard input ($engine)"
    run "crlf-stdin-$engine" --spec pick.json --engine "$engine" < crlf.ndjson
    expect_status 1
    expect_stdout_file crlf.expected
    expect_rejects '<stdin>' crlf.rejects
    end
done

# ---------------------------------------------------------------------------------------------------------------
echo "deep nesting: 10 000 levels kept; 10 001, 100 000 and 1 000 000 levels (closed and unclosed) rejected"
for depth in 100000 1000000; do
    perl -e '
        my $n = shift;
        print "{\"id\":0}\n", "[" x 10000, "]" x 10000, "\n", "[" x 10001, "]" x 10001, "\n";
        print "[" x $n, "]" x $n, "\n{\"id\":1}\n", "{\"a\":" x $n, "1", "}" x $n, "\n{\"id\":2}\n";
        print "[" x $n, "\n{\"id\":3}\n", "{\"a\":" x $n, "\n", "{\"id\":4,\"skip\":", "[" x $n, "]" x $n, "}\n{\"id\":5}\n";
    ' "$depth" > "deep-$depth.ndjson"
    perl -e 'print "{\"id\":0}\n", "[" x 10000, "]" x 10000, "\n"; print "{\"id\":$_}\n" for 1..3; print "{\"id\":5}\n"' > deep-identity.expected
    printf '{"id":0}\n{"id":1}\n{"id":2}\n{"id":3}\n{"id":5}\n' > deep-pick.expected
    printf '3\tnesting deeper than 10000 levels\n4\tnesting deeper than 10000 levels\n6\tnesting deeper than 10000 levels\n8\tnesting deeper than 10000 levels\n10\tnesting deeper than 10000 levels\n11\tnesting deeper than 10000 levels\n' > deep-identity.rejects
    # With pick, the 10 000-level array is a record that is not an object: rejected by the mapping.
    printf '2\texpected object, found array\n3\tnesting deeper than 10000 levels\n4\tnesting deeper than 10000 levels\n6\tnesting deeper than 10000 levels\n8\tnesting deeper than 10000 levels\n10\tnesting deeper than 10000 levels\n11\tnesting deeper than 10000 levels\n' > deep-pick.rejects
    for engine in stream tree; do
        for spec in identity pick; do
            begin "nesting $depth ($engine, $spec)"
            run "deep-$depth-$engine-$spec" --spec "$spec.json" --engine "$engine" "deep-$depth.ndjson"
            expect_status 1
            expect_stdout_file "deep-$spec.expected"
            expect_rejects "deep-$depth.ndjson" "deep-$spec.rejects"
            end
        done
    done
done

# ---------------------------------------------------------------------------------------------------------------
echo "big values: linear time"
perl -e 'srand(7); print "{\"id\":1,\"n\":"; print 1 + int rand 9 for 1 .. 1_000_000; print "}\n"' > digits.ndjson
echo '{"fields":{"id":"id","n":{"to":"n","type":"integer"}}}' > integer.json
echo '{"fields":{"n":{"to":"n","via":{"multiply":6}}}}' > multiply.json
echo '{"fields":{"n":{"to":"n","via":"numberToString"}}}' > tostring.json
for engine in stream tree; do
    begin "number with 1 000 000 digits ($engine)"
    run "digits-$engine" --spec identity.json --engine "$engine" digits.ndjson
    expect_status 0; expect_stdout_file digits.ndjson; expect_stderr_empty
    end
    begin "1 000 000 digits, type integer ($engine)"
    run "digits-int-$engine" --spec integer.json --engine "$engine" digits.ndjson
    expect_status 0; expect_stdout_file digits.ndjson; expect_stderr_empty
    end
    begin "1 000 000 digits, multiply by 6 ($engine)"
    run "digits-mul-$engine" --spec multiply.json --engine "$engine" digits.ndjson
    expect_status 0; expect_stderr_empty
    [ "$(wc -c < "$OUT")" -ge 1000007 ] || problem "multiply: $(wc -c < "$OUT") bytes of output"
    end
    begin "1 000 000 digits, numberToString ($engine)"
    run "digits-str-$engine" --spec tostring.json --engine "$engine" digits.ndjson
    expect_status 0; expect_stderr_empty
    [ "$(wc -c < "$OUT")" -eq 1000009 ] || problem "numberToString: $(wc -c < "$OUT") bytes of output, expected 1000009"
    end
done

# 20 MB of escapes: \t \u00e9 \" and a surrogate pair, decoded and written canonically.
perl -e 'print "{\"id\":1,\"s\":\"", "\\t\\u00e9\\\"\\ud83d\\ude00" x 909_091, "\"}\n"' > escapes.ndjson
perl -e 'print "{\"id\":1,\"s\":\"", "\\t\xc3\xa9\\\"\xf0\x9f\x98\x80" x 909_091, "\"}\n"' > escapes.expected
for engine in stream tree; do
    begin "20 MB string of escapes ($engine)"
    run "escapes-$engine" --spec identity.json --engine "$engine" escapes.ndjson
    expect_status 0; expect_stdout_file escapes.expected; expect_stderr_empty
    end
    begin "20 MB string of escapes, skipped ($engine)"
    run "escapes-pick-$engine" --spec pick.json --engine "$engine" escapes.ndjson
    expect_status 0; expect_stdout '{"id":1}'; expect_stderr_empty
    end
done

if [ "$quick" -eq 0 ]; then
    perl -e 'print "{"; for my $i (0 .. 999_999) { print "," if $i; print "\"k$i\":$i" } print ",\"id\":7}\n"' > keys.ndjson
    for engine in stream tree; do
        begin "object with 1 000 000 keys ($engine)"
        run "keys-$engine" --spec identity.json --engine "$engine" keys.ndjson
        expect_status 0; expect_stdout_file keys.ndjson; expect_stderr_empty
        end
        begin "1 000 000 keys, skipped ($engine)"
        run "keys-pick-$engine" --spec pick.json --engine "$engine" keys.ndjson
        expect_status 0; expect_stdout '{"id":7}'; expect_stderr_empty
        end
    done
    # Keys that share their length and first 8 bytes (what the copy's duplicate check hashes): 200 000 of them
    # took a minute before it fell back to sorting; now well under a second.
    perl -e 'print "{"; for my $i (0 .. 999_999) { print "," if $i; printf "\"collided%07d\":%d", $i, $i } print "}\n"' > collide.ndjson
    for engine in stream tree; do
        begin "1 000 000 keys made to collide ($engine)"
        run "collide-$engine" --spec identity.json --engine "$engine" collide.ndjson
        expect_status 0; expect_stdout_file collide.ndjson; expect_stderr_empty
        if [ "${SECS%.*}" -ge 10 ]; then problem "took ${SECS} s: the duplicate check went quadratic"; fi
        end
    done
    # streammap infer tracks at most 10 000 distinct paths: a million keys give a note and "unmapped": "keep", not a
    # million-field spec; the spec still maps the record (the rest passed through, in input order: the same bytes).
    begin "infer, 1 000 000 keys (paths capped)"
    run "keys-infer" infer keys.ndjson
    expect_status 0
    grep -q '"unmapped": "keep"' "$OUT" || problem "no \"unmapped\": \"keep\" in the inferred spec"
    [ "$(cat "$ERR")" = 'streammap: note: more than 10000 distinct paths: keys beyond them are not inferred, their objects pass them through ("unmapped": "keep")' ] \
        || problem "stderr: $(head -c 300 "$ERR")"
    end
    cp "$T/keys-infer.out" keys-inferred.json
    begin "infer's capped spec maps the 1 000 000 keys"
    run "keys-inferred" --spec keys-inferred.json keys.ndjson
    expect_status 0; expect_stdout_file keys.ndjson; expect_stderr_empty
    end
    rm -f keys.ndjson collide.ndjson keys-inferred.json

    perl -e 'print "{\"id\":1,\"s\":\"", "x" x 200_000_000, "\"}\n"' > big.ndjson
    for engine in stream tree; do
        begin "200 MB single record ($engine)"
        run "big-$engine" --spec identity.json --engine "$engine" big.ndjson
        expect_status 0; expect_stdout_file big.ndjson; expect_stderr_empty
        rm -f "$OUT"
        end
        begin "200 MB single record, skipped ($engine)"
        run "big-pick-$engine" --spec pick.json --engine "$engine" big.ndjson
        expect_status 0; expect_stdout '{"id":1}'; expect_stderr_empty
        end
    done
    rm -f big.ndjson
fi

# ---------------------------------------------------------------------------------------------------------------
echo "hostile where expressions: parsed and evaluated without recursion, mistakes reported with their column"
perl -e 'print "{\"mapper\":\"identity\",\"where\":\"", "(" x 1_000_000, "id == 1", ")" x 1_000_000, "\"}\n"' > where-parens.json
perl -e 'print "{\"mapper\":\"identity\",\"where\":\"", "(!" x 1_000_000, "id == 1", ")" x 1_000_000, "\"}\n"' > where-nots.json
perl -e 'print "{\"mapper\":\"identity\",\"where\":\"", "(" x 1_000_000, "id == 1", "\"}\n"' > where-open.json
printf '{"id":1}\n{"id":2}\n{"id":1,\n' > where-in.ndjson
for engine in stream tree; do
    begin "where: 1 000 000 nested parentheses ($engine)"
    run "where-parens-$engine" --spec where-parens.json --engine "$engine" where-in.ndjson
    expect_status 1; expect_stdout '{"id":1}'; expect_rejects where-in.ndjson <(printf '3\tpremature EOF\n')
    end
    begin "where: 1 000 000 nested (! ($engine)"
    run "where-nots-$engine" --spec where-nots.json --engine "$engine" where-in.ndjson
    expect_status 1; expect_stdout '{"id":1}'; expect_rejects where-in.ndjson <(printf '3\tpremature EOF\n')
    end
done
begin "where: 1 000 000 unclosed parentheses (an invalid spec)"
run where-open check where-open.json
expect_status 2
grep -q '^streammap: where-open.json: /where: column [0-9]*: this "(" is never closed$' "$ERR" || problem "stderr: $(head -c 300 "$ERR")"
end
begin "where: a 100 000-character --where, a mistake at its end (usage error)"
run where-flag --where "$(perl -e 'print "!" x 100_000, "id === 1"')" where-in.ndjson
expect_status 64
grep -q '^Error: --where: column 100006: expected a JSON value after ==' "$ERR" || problem "stderr: $(head -c 300 "$ERR")"
end
rm -f where-parens.json where-nots.json where-open.json where-in.ndjson

# ---------------------------------------------------------------------------------------------------------------
echo "many records"
perl -e 'for my $i (1 .. 200_000) { print $i % 2 ? "{\"id\":$i}\n" : "{\"id\":$i,\n" }' > mixed.ndjson
for engine in stream tree; do
    begin "100 000 bad among 100 000 good ($engine)"
    run "mixed-$engine" --spec pick.json --engine "$engine" mixed.ndjson
    expect_status 1
    expect_lines "$OUT" 100000
    expect_lines "$ERR" 100000
    [ "$(head -n 1 "$OUT")" = '{"id":1}' ] && [ "$(tail -n 1 "$OUT")" = '{"id":199999}' ] || problem "stdout: first or last record wrong"
    [ "$(head -n 1 "$ERR")" = 'streammap: mixed.ndjson:2: invalid JSON: premature EOF' ] || problem "first reject: $(head -n 1 "$ERR")"
    [ "$(tail -n 1 "$ERR")" = 'streammap: mixed.ndjson:200000: invalid JSON: premature EOF' ] || problem "last reject: $(tail -n 1 "$ERR")"
    end
done

if [ "$quick" -eq 0 ]; then
    declare -A tiny_rss
    for count in 1000000 10000000; do
        for engine in stream tree; do
            begin "$count tiny records from stdin ($engine)"
            run "tiny-$count-$engine" --spec pick.json --engine "$engine" < <(yes '{"id":1,"x":[2]}' | head -n "$count")
            expect_status 0
            expect_lines "$OUT" "$count"
            expect_stderr_empty
            [ "$(head -n 1 "$OUT")" = '{"id":1}' ] || problem "stdout: $(head -n 1 "$OUT")"
            tiny_rss[$count-$engine]=$RSS_KB
            if [ "$RSS_KB" -gt $((MAX_TINY_RSS_MB * 1024)) ]; then problem "peak RSS $RSS_KB KB > $MAX_TINY_RSS_MB MB"; fi
            if [ "$count" -eq 10000000 ] && [ "$RSS_KB" -gt $((tiny_rss[1000000-$engine] * 3 / 2 + 8192)) ]; then
                problem "peak RSS grows with the input: $RSS_KB KB for 10 000 000 records, ${tiny_rss[1000000-$engine]} KB for 1 000 000"
            fi
            rm -f "$OUT"
            end
        done
    done
fi

# ---------------------------------------------------------------------------------------------------------------
echo "compressed input"
perl -e 'for my $i (1 .. 20_000) { print $i % 1000 ? "{\"id\":$i}\n" : "{\"id\":$i,\n" }' > z.ndjson
gzip -n -c z.ndjson > z.gz
for engine in stream tree; do
    for cut in 5000 20000; do
        begin "gzip cut at byte $cut ($engine)"
        head -c "$cut" z.gz > cut.gz
        run "gzcut-$cut-$engine" --spec pick.json --engine "$engine" -q cut.gz
        expect_status 3
        [ "$(cat "$ERR")" = "streammap: cut.gz: truncated gzip data: the input ends at compressed byte $cut, inside a member" ] \
            || problem "stderr: $(head -c 300 "$ERR")"
        # The records before the cut: a prefix of the whole file's, one after another.
        n=$(wc -l < "$OUT")
        [ "$n" -gt 0 ] && [ "$(tail -n 1 "$OUT")" = "{\"id\":$((n + (n - 1) / 999))}" ] || problem "stdout: $n records, last $(tail -n 1 "$OUT")"
        end
    done
    begin "gzip with a corrupt block ($engine)"
    perl -e 'local $/; my $d = <STDIN>; substr($d, 3000, 40) = "x" x 40; print $d' < z.gz > bad.gz
    run "gzbad-$engine" --spec pick.json --engine "$engine" -q bad.gz z.gz
    expect_status 3
    grep -q '^streammap: bad.gz: corrupt gzip data at compressed byte [0-9]*: ' "$ERR" || problem "stderr: $(head -c 300 "$ERR")"
    [ "$(tail -n 1 "$OUT")" = '{"id":19999}' ] || problem "the input after the corrupt one was not read to its end"
    end
done
if [ "$quick" -eq 0 ]; then
    # A bomb: 2 GB of blank lines and one record are ~2 MB of gzip; memory must stay that of a small input.
    begin "gzip bomb, 2 GB of text in 2 MB"
    { head -c 2000000000 /dev/zero | tr '\0' '\n'; echo '{"id":7}'; } | gzip -1 -c > bomb.gz
    run bomb --spec pick.json --jobs 2 bomb.gz
    expect_status 0; expect_stdout '{"id":7}'; expect_stderr_empty
    if [ "$RSS_KB" -gt $((MAX_TINY_RSS_MB * 1024)) ]; then problem "peak RSS $RSS_KB KB > $MAX_TINY_RSS_MB MB"; fi
    end
    rm -f bomb.gz
fi

# Linear time: every feature family at n and 16n, both engines (scripts/scaling.py; about 30 s). A case fails
# above 48x: a linear feature takes ~16x as long, a quadratic one ~256x.
echo
echo "scaling (n and 16n, fail above 48x):"
scaling_out=$(python3 "$SCRIPTS/scaling.py" "$BIN" 2>&1)
printf '%s\n' "$scaling_out" | grep -v '^scaling:'
scaling_line=$(printf '%s\n' "$scaling_out" | grep '^scaling:' | tail -n 1)
if [[ "$scaling_line" =~ ^scaling:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    [ "${BASH_REMATCH[2]}" -eq 0 ] || failures+=("scaling: ${BASH_REMATCH[2]} cases above 48x")
else
    failed=$((failed + 1))
    failures+=("scaling: no summary (${scaling_line:-the script failed})")
fi

echo
echo "hardening: $passed passed, $failed failed"
for f in "${failures[@]}"; do echo "  failed: $f"; done
[ "$failed" -eq 0 ]
