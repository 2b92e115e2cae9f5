#!/usr/bin/env bash
# Entry point of the agentv-gate composite action: turns the action's inputs into an argv for the
# agentv-gate CLI and runs it.
#
# Why it is written this way: every input is attacker-influenced text (a pull request can edit the
# workflow that sets it, and `extra-args` often comes from expressions). So inputs arrive as
# environment variables (action.yml passes them through `env:`, never `${{ }}` inside `run:`), are
# put into a bash array element by element, and are never evaluated, word-split or globbed by the
# shell. `extra-args` is split with Python's shlex (POSIX quoting rules, no expansion at all).
#
# Inputs (all optional; an empty value means "use the CLI's default"):
#   INPUT_COMMAND      run (default) | validate | merge
#   INPUT_PATHS        one eval file or folder per line (merge: one results JSONL file or folder
#                      per line; a folder stands for every *.jsonl below it). A line is taken
#                      whole, spaces included; blank lines are skipped.
#   INPUT_THRESHOLD, INPUT_TARGETS, INPUT_TARGET, INPUT_WORKERS, INPUT_SHARD (validate: INPUT_TARGETS only)
#   INPUT_OUTPUT_DIR, INPUT_JUNIT, INPUT_RESULTS
#   INPUT_BASELINE, INPUT_FAIL_ON (run and merge: the base branch's results JSONL, all | regression)
#   (merge refuses INPUT_THRESHOLD: the shards' runs applied theirs)
#   INPUT_AFFECTED     true | false (default), run only: --affected-since INPUT_BASELINE
#   INPUT_RECORD, INPUT_REPLAY   run only: --record DIR / --replay DIR; INPUT_RECORD_JUDGES true | false
#   INPUT_COMMENT      true | false (default): the sticky pull-request comment, posted by a second
#                      call of this script (AGENTV_GATE_STEP=comment) in a later step of the action
#                      that runs `agentv-gate comment` on the results. The step that runs the suites
#                      never has the token: any process it starts (an agent, a judge) could read it
#                      from /proc/<pid>/environ of any ancestor, whatever the CLI took out of its own
#                      environment. The comment step runs no agent and no judge.
#   AGENTV_GATE_STEP   empty (the suites' step) | comment (the comment step; the token arrives as
#                      AGENTV_GATE_GITHUB_TOKEN, the results file as AGENTV_GATE_RESULTS)
#   INPUT_EXTRA_ARGS   further CLI arguments, shell-style quoting ('a b' stays one argument)
# Environment it honours: AGENTV_GATE_BIN (the CLI to run, default `agentv-gate` on PATH),
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_WORKSPACE (as the runner sets them; the CLI writes
# the junit-path, results-path and report-path outputs relative to GITHUB_WORKSPACE), RUNNER_OS (Linux
# or macOS; Windows or anything else stops with exit 2 before the CLI runs).
# Exit status: the CLI's own (0 pass, 1 cases failed, 2 configuration/usage error, 3 no eval cases
# found, 4 internal error, 130/143 interrupted; docs/commands.md "Exit codes"); 2 for a bad input.
set -euo pipefail

bin=${AGENTV_GATE_BIN:-agentv-gate}
command=${INPUT_COMMAND:-run}

# Appends name=value to $GITHUB_OUTPUT when the runner gave us one.
set_output() {
  if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

# Makes text safe to print to the job log. The runner reads workflow commands from the log: the
# `::name::` form at the start of a line, and the legacy `##[name]` form anywhere in a line. So
# newlines are escaped (an input cannot start a line of its own) as the toolkit's escapeData does,
# and `##[` is broken up, as agentv_gate/report/text.py does for model output.
escape_data() {
  local s=$1
  s=${s//%/%25}
  s=${s//$'\r'/%0D}
  s=${s//$'\n'/%0A}
  while [[ $s == *'##['* ]]; do
    s=${s//'##['/'## ['}
  done
  printf '%s' "$s"
}

# Stops with a usage error the way the CLI would: message on stderr, a workflow annotation, the
# exit-code output, a line in the job summary.
fail_usage() {
  printf 'agentv-gate action: %s\n' "$(escape_data "$1")" >&2
  if [[ -n ${GITHUB_ACTIONS:-} ]]; then
    printf '::error title=agentv-gate action::%s\n' "$(escape_data "$1")"
  fi
  set_output exit-code 2
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    # shellcheck disable=SC2016  # the backquotes are Markdown, not a command substitution
    printf '### agentv-gate: configuration error\n\n```\n%s\n```\n' "$1" >>"$GITHUB_STEP_SUMMARY"
  fi
  exit 2
}

# Trims leading and trailing blanks (spaces, tabs, CR) of one line without any expansion.
trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

# The runners the action supports: Linux and macOS. On Windows the install step's virtualenv
# layout (bin/ vs Scripts/), python3 and the judges' POSIX process handling would fail halfway and
# confusingly, so the action stops here, first, before anything is installed or run. RUNNER_OS
# unset (not on a runner, e.g. a local run of this script) is a POSIX machine by assumption.
case ${RUNNER_OS:-} in
  '' | Linux | macOS) ;;
  Windows) fail_usage "Windows runners are not supported (RUNNER_OS=Windows): run this job on a Linux or macOS runner, e.g. runs-on: ubuntu-latest" ;;
  *) fail_usage "runner OS '${RUNNER_OS}' is not supported: agentv-gate runs on Linux and macOS runners (RUNNER_OS Linux or macOS)" ;;
esac

case $command in
  run | validate | merge) ;;
  *) fail_usage "unknown command '$command' (expected run, validate or merge)" ;;
esac

# The value of INPUT_<name> if non-empty after trimming; used for single-valued inputs.
value_of() {
  local var="INPUT_$1"
  trim "${!var:-}"
}

args=("$command")

# The comment switch: true or false, nothing else (a typo must not silently mean "no comment").
comment=$(trim "${INPUT_COMMENT:-false}")
case $comment in
  true | false | '') ;;
  *) fail_usage "input comment is '$comment': expected true or false" ;;
esac
# The other switches: true or false, nothing else, for the same reason.
switch_of() {
  local value
  value=$(value_of "$1")
  case $value in
    true | false | '') printf '%s' "${value:-false}" ;;
    *) fail_usage "input $(tr 'A-Z_' 'a-z-' <<<"$1") is '$value': expected true or false" ;;
  esac
}
affected=$(switch_of AFFECTED)
record_judges=$(switch_of RECORD_JUDGES)
step=${AGENTV_GATE_STEP:-}
case $step in
  '' | comment) ;;
  *) fail_usage "AGENTV_GATE_STEP is '$step': expected empty or comment" ;;
esac
# The suites' step: no token, and so no --comment (the comment step posts it from the results). A
# shard would replace the comment with its part of the run, so it is refused here, before any case
# runs, as `run --comment --shard` is.
add_comment() {
  if [[ $comment == true && $command == run && -n $(value_of SHARD) ]]; then
    fail_usage "input comment with input shard $(value_of SHARD): each shard would replace the comment with its part of the run; comment from the job that merges the shards (command: merge)"
  fi
}

# Single-valued options: input name -> CLI flag, per command. An input that means nothing for the
# command is reported rather than silently dropped, so a typo in a workflow shows up.
add_option() {
  local input=$1 flag=$2 value
  value=$(value_of "$input")
  if [[ -n $value ]]; then
    args+=("$flag" "$value")
  fi
}

warn_unused() {
  local input value
  for input in "$@"; do
    value=$(value_of "$input")
    if [[ -n $value ]]; then
      printf '::warning title=agentv-gate action::input %s is ignored by the %s command\n' \
        "$(tr 'A-Z_' 'a-z-' <<<"$input")" "$command"
    fi
  done
}

case $command in
  run)
    add_option THRESHOLD --threshold
    add_option TARGETS --targets
    add_option TARGET --target
    add_option WORKERS --workers
    add_option SHARD --shard
    add_option OUTPUT_DIR --output-dir
    add_option JUNIT --junit
    add_option RESULTS --results
    add_option BASELINE --baseline
    add_option FAIL_ON --fail-on
    # affected: the cases the change can affect, judged against the baseline's digests; without a
    # baseline (main never ran yet) every case runs, and the log says so.
    if [[ $affected == true ]]; then
      if [[ -n $(value_of BASELINE) ]]; then
        args+=(--affected-since "$(value_of BASELINE)")
      else
        printf '::notice title=agentv-gate action::input affected: no baseline to compare with, so every case runs\n'
      fi
    fi
    add_option RECORD --record
    add_option REPLAY --replay
    [[ $record_judges == true ]] && args+=(--record-judges)
    add_comment
    ;;
  validate)
    # validate checks the target names the cases use against the targets file: it needs it too
    add_option TARGETS --targets
    warn_unused THRESHOLD TARGET WORKERS SHARD OUTPUT_DIR JUNIT RESULTS BASELINE FAIL_ON RECORD REPLAY
    if [[ $comment == true ]]; then
      printf '::warning title=agentv-gate action::input comment is ignored by the validate command\n'
    fi
    ;;
  merge)
    # Each shard's run judged its cases at its own threshold: one set here would look like the
    # merged gate's and never be applied.
    if [[ -n $(value_of THRESHOLD) ]]; then
      fail_usage "input threshold does not reach a merge: each shard's run applied its own threshold; set threshold on the shard jobs (command: run), not on the merge step"
    fi
    warn_unused TARGETS TARGET WORKERS SHARD RECORD REPLAY
    add_option OUTPUT_DIR --output-dir
    add_option JUNIT --junit
    add_option RESULTS --results-out
    # The shards' regression gate, again for the whole (merge --baseline/--fail-on)
    add_option BASELINE --baseline
    add_option FAIL_ON --fail-on
    add_comment
    ;;
esac

# Extra arguments: shlex-split by Python into NUL-separated words, then read back one word at a
# time. Nothing in them is ever run by a shell; a quoting error is a usage error, not a crash.
extra=()
if [[ -n $(value_of EXTRA_ARGS) ]]; then
  split_file=$(mktemp)
  trap 'rm -f "$split_file"' EXIT
  if ! python3 -c '
import os, shlex, sys
try:
    words = shlex.split(os.environ["INPUT_EXTRA_ARGS"], comments=False, posix=True)
except ValueError as exc:
    sys.stderr.write(f"extra-args cannot be split: {exc}\n")
    sys.exit(2)
sys.stdout.write("".join(w + "\0" for w in words))
' >"$split_file"; then
    fail_usage "extra-args has unbalanced quotes: ${INPUT_EXTRA_ARGS}"
  fi
  while IFS= read -r -d '' word; do
    extra+=("$word")
  done <"$split_file"
fi

# Paths go last, after `--`, so a path that starts with '-' is still a path.
paths=()
while IFS= read -r line || [[ -n $line ]]; do
  line=$(trim "$line")
  [[ -z $line ]] && continue
  if [[ $command == merge && -d $line ]]; then
    found=0
    while IFS= read -r -d '' file; do
      paths+=("$file")
      found=1
    done < <(find "$line" -type f -name '*.jsonl' -print0 | LC_ALL=C sort -z)
    if [[ $found == 0 ]]; then
      fail_usage "no results *.jsonl files found under '$line'"
    fi
  else
    paths+=("$line")
  fi
done <<<"${INPUT_PATHS:-}"

if [[ $command == merge && ${#paths[@]} == 0 ]]; then
  fail_usage "merge needs the shards' results files: set 'paths' to the JSONL files or their folder"
fi

argv=("${args[@]}")
if ((${#extra[@]})); then
  argv+=("${extra[@]}")
fi
if ((${#paths[@]})); then
  argv+=(-- "${paths[@]}")
fi

# The comment step: `agentv-gate comment RESULTS [PATHS]` with the options that decide the verdict
# (baseline, fail-on and those of extra-args) and the filters that name the comment (--suite,
# --test-id, --tag, --exclude-tag), so it says what the run decided and finds the comment `run --comment` would have.
if [[ $step == comment ]]; then
  [[ $command == validate ]] && exit 0
  results=${AGENTV_GATE_RESULTS:-}
  [[ -z $results ]] && fail_usage "the comment step needs the results file (AGENTV_GATE_RESULTS)"
  if [[ $results != /* && -n ${GITHUB_WORKSPACE:-} ]]; then
    results="$GITHUB_WORKSPACE/$results"  # the results-path output is relative to the workspace root
  fi
  argv=(comment)
  [[ -n $(value_of BASELINE) ]] && argv+=(--baseline "$(value_of BASELINE)")
  [[ -n $(value_of FAIL_ON) ]] && argv+=(--fail-on "$(value_of FAIL_ON)")
  keep_next=0
  if ((${#extra[@]})); then
    for word in "${extra[@]}"; do
      if ((keep_next)); then
        argv+=("$word")
        keep_next=0
        continue
      fi
      case $word in
        --baseline | --fail-on | --alpha | --history | --max-trials | --max-drop | --suite | --test-id | --eval-id \
          | --tag | --exclude-tag)
          argv+=("$word")
          keep_next=1 ;;
        --baseline=* | --fail-on=* | --alpha=* | --history=* | --max-trials=* | --max-drop=* | --suite=* | --test-id=* \
          | --eval-id=* | --tag=* | --exclude-tag=*)
          argv+=("$word") ;;
      esac
    done
  fi
  argv+=(-- "$results")
  if [[ $command == run ]] && ((${#paths[@]})); then
    argv+=("${paths[@]}")  # merge: the comment is the workflow's whole run, named by no paths
  fi
  printf 'agentv-gate action: posting the comment:%s\n' "$(escape_data "$(printf ' %q' "$bin" "${argv[@]}")")" >&2
  exec "$bin" "${argv[@]}"
fi

shown=$(printf ' %q' "$bin" "${argv[@]}")
printf 'agentv-gate action: running%s\n' "$(escape_data "$shown")" >&2

# The size of the job summary before the CLI runs: a configuration error the CLI could name, it
# has already put in the summary (with the problems at their file:line); only one it could not
# (a flag argparse refused) still needs the general line below.
summary_size() {
  if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $GITHUB_STEP_SUMMARY ]]; then
    wc -c <"$GITHUB_STEP_SUMMARY"
  else
    echo 0
  fi
}
summary_before=$(summary_size)

status=0
"$bin" "${argv[@]}" || status=$?

set_output exit-code "$status"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  # shellcheck disable=SC2016  # Markdown backquotes
  case $status in
    2) if [[ $(summary_size) == "$summary_before" ]]; then
         printf '### agentv-gate: configuration error\n\nThe `%s` command stopped before running any case (exit 2); the log of this step says why.\n' \
           "$command" >>"$GITHUB_STEP_SUMMARY"
       fi ;;
    3) printf '### agentv-gate: no eval cases found\n\nThe `%s` command found no eval case in the paths given (exit 3), so nothing was checked; the log of this step says where it looked.\n' \
      "$command" >>"$GITHUB_STEP_SUMMARY" ;;
    4) printf '### agentv-gate: internal error\n\nThe `%s` command hit a bug in agentv-gate (exit 4); the log of this step has the message. Add `--verbose` to `extra-args` for the traceback.\n' \
      "$command" >>"$GITHUB_STEP_SUMMARY" ;;
  esac
fi
exit "$status"
