"""The probe language (issue 34): bpftrace's programs run by `trapline trace -e 'PROGRAM'` and
`trapline trace FILE.bt`, over the instrumenter's uprobes, the door's system-call and process
events and its instruction clock.

  grammar.lark, parser.py, ast.py   text -> syntax tree (lark, LALR), errors with a caret
  checks.py, attach.py              names, arities, map kinds, attach points: before the run
  evaluator.py, builtins.py, statements.py, printf.py, values.py   the compiled actions
  aggregations.py, maps.py          count/sum/avg/min/max/stats/hist/lhist, bpftrace's printing
  hit.py, stacks.py, syscall_args.py   what a hit reads of the guest (through the door)
  consumer.py                       one program: its maps, output, exit(), errors
  probes.py, events.py, runner.py   attach points wired to the guest; the run
  listing.py, cli.py                trace -l; the hook trace hands -e/FILE.bt/-l to
"""
