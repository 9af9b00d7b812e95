# prints, for each failing test of a `go test -v` log, the last lines it logged (the log is interleaved by === NAME/CONT/RUN markers)
FNR == NR { if ($0 ~ /^[[:space:]]*--- FAIL: / && $3 ~ /\//) failing[$3] = 1; next }
/^=== (RUN|CONT|NAME|PAUSE)/ { current = $3; next }
/^[[:space:]]*--- (PASS|FAIL|SKIP)/ { next }
{ if (current in failing) { n = count[current]++; lines[current, n % keep] = $0 } }
END {
  for (t in failing) {
    c = count[t]; if (c == 0) continue
    printf "--- last lines logged by %s:\n", t
    start = c > keep ? c - keep : 0
    for (i = start; i < c; i++) print "  " substr(lines[t, i % keep], 1, 400)
  }
}
