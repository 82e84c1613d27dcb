"""Real history: consecutive releases of public packages replayed through our gate, judged as SWE-bench's harness
judges (FAIL_TO_PASS / PASS_TO_PASS)."""
