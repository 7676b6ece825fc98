#!/bin/bash
# One run of the CompareNoiseModel e2e test's data: five rounds A B C beside one busy core.
B=/work/main/build; R=$B/bin/runner; P=$B/lib/kreg/plugins; F=$B/tests/fixture-plugins
d=/tmp/cmp/run$1; rm -rf $d; mkdir -p $d; cd $d
sweep() { $R --no-default-plugins --plugin $P/cpu_naive.so --plugin $F/$1.so --plugin $P/cpu_blocked.so \
  -k cpu_naive,fixture_honest_gemm,cpu_blocked --sizes 32,48,64,96 --warmup 1 --time-budget 0.2 --json $2 >/dev/null 2>&1; }
( timeout 300 sh -c 'while :; do :; done' ) & busy=$!
for r in 1 2 3 4 5; do sweep fixture_honest_gemm a$r.json; sweep fixture_honest_gemm b$r.json; sweep fixture_honest_gemm_slower c$r.json; done
kill $busy
uptime > load.txt
