"""One run of the gate command and what it showed: the runners instrumented, the gate's channel and every account of the
run cross-checked, and the runs a verdict is decided on (the flaky re-run).

result.py: runs of the gate command and what they observed.
observed.py: what one run shows on its own: judged by ids, counts or exit status; ran no test; can't run.
instrument.py: test ids from runners the gate does not control, through their environment.
channel.py: the gate's own pipe out of a run, where the runners' reporters write as tests end.
summaries.py: every end-of-session summary a runner printed in a run's output.
crosscheck.py: every account of a run must agree; what disagrees is tampering.
stream_checks.py: go's packages and cargo's test binaries, account by account.
tracked.py: which tracked files a run of the gate changed.
bounded.py: a report or file read at most up to a size (a test can make its report any size).
runners/: what each runner family observed in one run, from its reports or its output.
excerpt.py: where a failing test's own lines are in a run's output.
failure_message.py: why one failing test failed, in a line, from its runner's own report of it.
judge.py: can the command gate at all, and the runs a verdict is decided on (the flaky re-run).
reads.py: the files each base test read (recorded by the gate's pytest plugin): its data, wherever it lives.
per_package.py: a monorepo's gate, run per touched package.
"""
