"""One raw case mapping -> `EvalCase`, accepting every generation of AgentV's field names.

Generations: `question`/`input_messages`/`input`, `expected_outcome`/`criteria`/`outcome`,
`expected_messages`/`expected_output`, `reference_answer`; evaluators from `evaluators`,
`execution.evaluators`, `assert`, or the single `evaluator` / deprecated `grader`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from ..base.generations import Generation
from ..base.key_checks import not_yet_message
from ..base.problems import Problem, no_effect
from ..errors import EvalFileError
from ..models import (
    EvalCase,
    EvaluatorConfig,
    LlmJudgeConfig,
    Message,
    SuiteExecution,
    question_text,
)
from .case_vars import case_variables, render, rendered_case
from .conversation import parse_conversation
from .dependencies import parse_depends_on
from .eval_file_keys import (
    EXPECTED_SEGMENT_KEYS,
    SEGMENT_KEYS,
    TEST_EXECUTION_KEYS,
    TEST_KEYS,
    declared,
    key_problems,
    one_of_problems,
)
from .evaluator_parser import check_weight_total, parse_evaluator, parse_evaluators
from .execution_settings import (
    BLANK_TARGET,
    RESET_IN_2X,
    blank_target_line,
    parse_input_files,
    parse_targets,
    parse_trials,
    parse_workspace,
    suite_only_problems,
    written_twice_problems,
)
from .file_generation import MIX_EXPECTED, GenerationTracker
from .forms4 import case_is_4x, merge_metadata
from .globs import matches_any
from .preprocessors import with_suite_preprocessors
from .refs import SearchRoots
from .rubric_items import parse_rubric_items
from .yaml_lines import LineDict, item_line, key_line, line_of, yaml_kind


def is_guideline(ref: str, patterns: Sequence[str]) -> bool:
    """Whether a file attached at `ref` (relative to the repository root) is a guideline file: AgentV 2.19
    matches it against the project config's `guideline_patterns` and, with none configured, calls no file
    a guideline (its suite-level input's files are guidelines regardless: see `_content`)."""
    return matches_any(ref.replace("\\", "/"), patterns)


MESSAGE_ROLES = ("system", "user", "assistant", "tool")
"""The roles AgentV's `isTestMessage` accepts; a message with another is dropped there."""


def _check_kept(message: dict[str, Any], line: int, field: str) -> None:
    """A message AgentV's `isTestMessage` would drop from the list, refused at its line: a role other than
    system, user, assistant or tool, or content that is neither text, a list of segment mappings nor a
    mapping (a number, a list holding text, none at all) without tool calls. AgentV sends the rest of the
    list without it (or skips the test when none is left); sending it here asked the agent something else."""
    role = message["role"]
    if role not in MESSAGE_ROLES:
        raise EvalFileError(line, f"role {role!r} in '{field}' is not one of {', '.join(MESSAGE_ROLES)}: AgentV 2.19 "
                                  "drops such a message", "role: user, assistant, system or tool")
    content = message.get("content")
    if isinstance(content, str) or isinstance(content, dict) or (
            isinstance(content, list) and all(isinstance(seg, dict) for seg in content)):
        return
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        return
    got = "no content" if content is None else f"content that is {yaml_kind(content)}" if not isinstance(
        content, list) else "a content list holding something other than mappings"
    raise EvalFileError(line, f"a message in '{field}' with {got}: AgentV 2.19 drops such a message",
                        "content: text, or a list of {type: text, value: ...} / {type: file, value: ...} segments")


class CaseBuilder:
    """Holds what is shared by the cases of one file: roots, suite defaults, problems found."""

    def __init__(self, file: Path, suite: str, roots: SearchRoots, defaults: dict[str, Any], problems: list[Problem],
                 suite_file: Path | None = None):
        self.file = file
        self.suite_file = suite_file
        """The eval file, when `file` is a case file it includes with `file://`."""
        self.suite = suite
        self.roots = roots
        self.defaults = defaults
        self.problems = problems
        suite_generation = defaults.get("file_generation")
        self.generations = GenerationTracker(suite_generation) if suite_generation is not None else None
        self.case_file = self._display(file.resolve()) if suite_file is not None else None
        self.suite_execution: SuiteExecution = defaults.get("suite_execution") or SuiteExecution()
        self._reset_warned: set[tuple[Path, int]] = set()
        """The `reset`s already said to have no effect (a suite's hooks reach every case)."""
        """One for every case of the file, as the suite's own is: a new one per case cost a tenth of making the case."""

    # ---------------------------------------------------------------- messages

    def _messages(self, raw: Any, line: int, field: str, files: dict[str, list[str]] | None,
                  all_guidelines: bool = False) -> list[Message]:
        if raw is None:
            return []
        is_input = field in ("input", "input_messages")  # `input` (AgentV 3+) and `input_messages` (2.x) read alike
        role = "user" if is_input else "assistant"
        if isinstance(raw, str):
            return [Message(role=role, content=raw)]
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            # AgentV's shorthand takes text, a mapping or a list: a number there is no input (the test is
            # skipped) or no expected output, never the number's text
            raise EvalFileError(line_of(raw, line), f"'{field}' is a number: AgentV 2.19 reads only text, a mapping "
                                                    "or a list of messages here", f"{field}: \"{raw}\", quoted as text")
        written = True  # the entries are messages as written, not content wrapped in one here
        if isinstance(raw, dict):
            # AgentV 3+'s shorthand: a mapping with a role is one message, any other mapping is content.
            written = "role" in raw
            raw = [raw] if written else [{"role": role, "content": self._content(raw, line, files, is_input)}]
        elif isinstance(raw, list) and raw and not is_input and not (isinstance(raw[0], dict) and "role" in raw[0]):
            raw, written = [{"role": role, "content": raw}], False
        if not isinstance(raw, list):
            raise EvalFileError(line_of(raw, line), f"'{field}' must be text or a list of messages",
                                "a string or [{role: ..., content: ...}]")
        messages = []
        for index, item in enumerate(raw):
            item_at = line_of(item, item_line(raw, index, line_of(raw, line)))
            if isinstance(item, str):
                # AgentV keeps only the entries of a message list that are messages (`isTestMessage`): this
                # text is dropped there, so the agent is asked something else (or, alone, the test is skipped).
                raise EvalFileError(item_at, f"a text entry in the '{field}' list is not a message: AgentV 2.19 drops "
                                             "it", f"{{role: {role}, content: ...}}, or '{field}' as one text")
            if not isinstance(item, dict) or "role" not in item:
                raise EvalFileError(item_at, f"each entry of '{field}' must be a message with a 'role'",
                                    "{role: user, content: ...}")
            data = dict(item)
            if not isinstance(data["role"], str) or not data["role"].strip():
                raise EvalFileError(item_at, f"'role' in '{field}' must be text, got {data['role']!r}",
                                    "role: user, assistant, system or tool")
            if written:
                _check_kept(data, item_at, field)
            data["content"] = self._content(data.get("content", ""), item_at, files, is_input, all_guidelines)
            try:
                messages.append(Message.model_validate(data))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "message"
                raise EvalFileError(item_at, f"a message in '{field}' is not valid: {where}: {first['msg']}",
                                    "{role: user, content: ...}") from None
        return messages

    def _content(self, content: Any, line: int, files: dict[str, list[str]] | None, is_input: bool = True,
                 all_guidelines: bool = False) -> Any:
        """File segments are read and get `path`, `text` and `resolved_path` beside what was written
        (`value` stays as written: judges read it); guideline files leave the message for `guideline_files`.
        `is_input`: the segments of an input message (else of an expected one, whose text segments may hold `text`).
        `all_guidelines`: the suite-level input's segments, whose files AgentV 2.19 takes as guidelines, all of them."""
        known = SEGMENT_KEYS if is_input else EXPECTED_SEGMENT_KEYS
        if isinstance(content, dict) and "type" in content:
            content = [content]
        if not isinstance(content, list):
            return content
        out: list[Any] = []
        for seg in content:
            seg_line = line_of(seg, line)
            kind = seg.get("type") if isinstance(seg, dict) else None
            if isinstance(kind, str) and kind in known:  # a `type` may be any YAML value
                said = ("path",) if kind == "file" else ()  # said below, with what names the file instead
                self.problems.extend(key_problems(seg, (*known[kind], *said), "segment", f"a {kind} segment", self.file))
                if kind == "file" and "path" in seg:
                    self.problems.append(Problem(self.file, key_line(seg, "path", seg_line),
                                                 "unknown key 'path' in a file segment: 'value' names its file",
                                                 "'value' alone", unknown_key=True))
            if isinstance(seg, dict) and seg.get("type") == "file":
                ref = str(seg.get("value", ""))  # AgentV reads `value` only: a `path` attaches nothing there
                if not ref:
                    raise EvalFileError(seg_line, "file segment has no 'value'", "type: file, value: path/to/file")
                path = self.roots.resolve(ref, seg_line, "referenced file")
                rel = self._display(path)
                if files is not None and (all_guidelines or is_guideline(rel, self.roots.guideline_patterns)):
                    files["guideline"].append(str(path))
                    continue
                if files is not None:
                    files["input"].append(str(path))
                try:
                    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
                except (OSError, UnicodeDecodeError) as exc:
                    raise EvalFileError(seg_line, f"referenced file {ref!r} cannot be read: {exc}", "a UTF-8 file") from None
                out.append({**seg, "type": "file", "value": ref, "path": rel, "text": text, "resolved_path": str(path)})
            else:
                out.append(seg)
        return out

    def _display(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.roots.repo_root.resolve()))
        except ValueError:
            return str(path)

    # ---------------------------------------------------------------- evaluators

    def _evaluators(self, raw: dict[str, Any], execution: dict[str, Any], line: int, *, skips_defaults: bool,
                    four_x: bool, generation: Generation) -> list[EvaluatorConfig]:
        """AgentV's precedence. AgentV 2.x (`evalcases`): the case's list, else the suite's. AgentV 3+
        (`tests`): the case's list with the suite's appended. `execution.skip_defaults`: never the suite's."""
        appended = self.defaults.get("generation") == 3  # AgentV 3+ (`tests:`) appends the suite's
        listed: list[tuple[Any, str, bool]] = [  # (mapping, key, name required)
            (raw, "assertions", False),
            (raw, "assert", False),
            (execution, "evaluators", not appended),
            (raw, "evaluators", not appended),
        ]
        configs: list[EvaluatorConfig] = []
        found = False
        for holder, key, name_required in listed:
            value = holder.get(key)
            if value is not None:
                found = True
                configs.extend(parse_evaluators(value, self.roots, self.file, self.problems, name_required=name_required,
                                                line=key_line(holder, key, line), criteria_strings=four_x,
                                                assertions_key=key == "assertions", file_generation=generation))
        if not found:
            single, single_key = raw.get("evaluator"), "evaluator"
            if single is None and "grader" in raw:
                single, single_key = raw["grader"], "grader"
                self.problems.append(Problem(self.file, key_line(raw, "grader", line), "'grader' is deprecated", "'evaluator'",
                                         severity="warning"))
            if single is not None:
                configs.append(parse_evaluator(single, self.roots, self.file, self.problems, name_required=False,
                                               line=key_line(raw, single_key, line), file_generation=generation))
                found = True
        configs = with_suite_preprocessors(configs, self.defaults.get("preprocessors") or [])
        suite_configs = [] if skips_defaults else list(self.defaults.get("evaluators", []))
        configs = configs + suite_configs if appended else configs if found else suite_configs
        rubric = self._case_rubrics(raw, line)
        configs = [rubric, *configs] if rubric is not None else configs
        check_weight_total([c.weight for c in configs], line, "the weights of the test's evaluators")
        return configs

    def _turn_evaluators(self, entries: list[Any], line: int) -> list[EvaluatorConfig]:
        """A conversation turn's assertions, read as a 4.x test's are."""
        return parse_evaluators(entries, self.roots, self.file, self.problems, name_required=False, line=line,
                                criteria_strings=True, assertions_key=True, file_generation="4.x")

    def _case_rubrics(self, raw: dict[str, Any], line: int) -> LlmJudgeConfig | None:
        """AgentV's deprecated case-level `rubrics:`: a rubric judge placed first, its object items
        required unless they say otherwise."""
        if "rubrics" not in raw:
            return None
        at = key_line(raw, "rubrics", line)
        items = parse_rubric_items(raw["rubrics"], at, "'rubrics'", objects_required=True)
        self.problems.append(Problem(self.file, at, "a test's 'rubrics' is deprecated", "an assert entry "
                                     "`type: rubrics` with `criteria:`", severity="warning"))
        return LlmJudgeConfig(name="rubric", rubrics=items, source_file=self.file, source_line=at)

    # ---------------------------------------------------------------- the case

    def _input(self, raw: dict[str, Any], line: int, case_id: str, files: dict[str, list[str]], *,
               skips_defaults: bool) -> list[Message]:
        if "input_messages" in raw:
            value, key = raw["input_messages"], "input_messages"
        elif "input" in raw:
            value, key = raw["input"], "input"
        elif "question" in raw:
            value, key = raw["question"], "question"
        else:
            raise EvalFileError(line, f"case '{case_id}' has no input", "'input', 'input_messages' or 'question'")
        own_files = "input_files" in raw
        # AgentV: the suite's files, like its input, are not a test's that skips the defaults.
        input_files = (parse_input_files(raw["input_files"], key_line(raw, "input_files", line)) if own_files
                       else None if skips_defaults else self.defaults.get("input_files"))
        variables = case_variables(raw)
        if variables is not None and not own_files and input_files:  # the suite's, as this test's vars fill them
            input_files = render(input_files, variables)
        if input_files and not isinstance(value, str):
            # AgentV attaches them to a text input only, and skips any other test: never run without them.
            source = ("'input_files'" if own_files
                      else f"the suite's 'input_files' (line {self.defaults.get('input_files_line')})")
            raise EvalFileError(key_line(raw, "input_files", line) if own_files else key_line(raw, key, line),
                                f"{source} attaches files to a text 'input' only: test '{case_id}' writes its "
                                f"'{key}' as {yaml_kind(value)}",
                                "'input' as text, or `type: file` segments in a message's content")
        if input_files:
            # AgentV 3+'s shorthand: files first, then the text, as one user message.
            # Each entry keeps its own line (YAML and JSONL lists carry one per entry), so a missing
            # file is reported where it is listed.
            segments: list[Any] = []
            for number, entry in enumerate(input_files):
                segment = LineDict(type="file", value=str(entry))
                segment.line = item_line(input_files, number, line)
                segments.append(segment)
            value = [{"role": "user", "content": [*segments, {"type": "text", "value": value}]}]
        # The suite's input first, as AgentV processes it: its files lead the guideline list.
        suite_input = None if skips_defaults else self.defaults.get("input")
        if variables is not None and suite_input is not None:
            suite_input = render(suite_input, variables)
        suite_messages = ([] if suite_input is None else
                          self._messages(suite_input, line_of(suite_input, line), "input", files, all_guidelines=True))
        return suite_messages + self._messages(value, line_of(value, key_line(raw, key, line)),
                                               key if key != "question" else "input", files)

    def _check_keys(self, raw: dict[str, Any], index: int) -> None:
        """Every key of the test and of its `execution` is read, or reported where it is written."""
        case_id = raw.get("id", raw.get("eval_id"))
        where = f"test '{case_id}'" if case_id is not None and str(case_id).strip() else f"case #{index + 1}"
        self.problems.extend(key_problems(raw, TEST_KEYS, "test", where, self.file))
        self.problems.extend(key_problems(raw.get("execution"), TEST_EXECUTION_KEYS, "execution",
                                          f"'execution' of {where}", self.file))
        self.problems.extend(suite_only_problems(raw.get("execution"), self.file, f"'execution' of {where}"))
        self.problems.extend(written_twice_problems(raw, raw.get("execution"), where, self.file))
        self.problems.extend(one_of_problems(raw, where, self.file, test=True))
        if "vars" in raw and case_variables(raw) is None and raw["vars"] != {}:
            self.problems.append(no_effect(self.file, key_line(raw, "vars", line_of(raw)), "vars",
                                           f"{where}: AgentV 4.42 fills placeholders from a mapping only, got "
                                           f"{yaml_kind(raw['vars'])}", "vars: {name: value}"))

    def build(self, raw: Any, index: int, line: int) -> EvalCase:
        """`line`: where the entry starts (every entry, YAML or JSONL, has one); a mapping's own line wins."""
        line = line_of(raw, line)
        if not isinstance(raw, dict):
            raise EvalFileError(line, f"case #{index + 1} must be a mapping, got {yaml_kind(raw)}", "id: ..., input: ...")
        self._check_keys(raw, index)
        raw = declared(rendered_case(raw), TEST_KEYS)
        # Read with AgentV 4.x's meaning: the file's settings or the test's own evaluators use a form only
        # 3.0+ reads (loader/forms4.py).
        four_x = bool(self.defaults.get("four_x")) or case_is_4x(raw)
        decided = None
        if self.generations is not None:
            decided, conflict = self.generations.for_case(raw, line)
            if conflict is not None:  # neither AgentV runs such a file as written (file_generation.py)
                self.problems.append(Problem(self.file, conflict[0], conflict[1], MIX_EXPECTED))
        case_id = raw.get("id", raw.get("eval_id"))
        if case_id is None or str(case_id).strip() == "":
            raise EvalFileError(line, f"case #{index + 1} has no 'id'", "a unique id per case")
        if not isinstance(case_id, str):
            # AgentV reads the id as text only (`asString`): `id: 123` or `id: true` is no id there, and the
            # test is skipped; run here under the name "123", it was a result AgentV never gives
            id_key = "id" if "id" in raw else "eval_id"
            raise EvalFileError(key_line(raw, id_key, line), f"case #{index + 1}: '{id_key}' is {yaml_kind(case_id)} "
                                                             f"({case_id!r}), not text: AgentV 2.19 skips such a test",
                                f"{id_key}: \"{case_id}\", quoted as text")
        execution = declared(mapping(raw.get("execution")), TEST_EXECUTION_KEYS)
        skip = execution.get("skip_defaults")
        if skip is not None and not isinstance(skip, bool):
            # AgentV skips the defaults for `true` only; read as truthy, "false" or "no" dropped them here.
            raise EvalFileError(line_of(skip, key_line(raw["execution"], "skip_defaults", line)),
                                f"'skip_defaults' must be true or false, got {skip!r}", "skip_defaults: true")
        # AgentV's `execution.skip_defaults: true`: the test takes none of the suite's `assert` list,
        # `input` messages and `input_files`.
        skips_defaults = skip is True
        files: dict[str, list[str]] = {"guideline": [], "input": []}
        input_messages = self._input(raw, line, case_id, files, skips_defaults=skips_defaults)
        # gen1's `question` is the input only when no later spelling is written (beside one it is refused).
        explicit_question = raw.get("question") if "input" not in raw and "input_messages" not in raw else None
        question = explicit_question if isinstance(explicit_question, str) else question_text(input_messages)
        if (not question or question.isspace()) and not input_messages:  # no copy of a long input, as strip() makes
            raise EvalFileError(line, f"case '{case_id}' has an empty input", "at least one user message")

        # The AgentV 2.x name wins over the AgentV 3+ alias when both are present, as in AgentV.
        expected_key = "expected_messages" if "expected_messages" in raw else "expected_output"
        expected_raw = raw.get(expected_key)
        expected_messages = self._messages(expected_raw, key_line(raw, expected_key, line), "expected_output", None)
        reference = raw.get("reference_answer")
        if reference is None:
            reference = reference_text(expected_messages)
        outcome_key = ("criteria" if "criteria" in raw else "expected_outcome" if "expected_outcome" in raw
                       else "outcome" if "outcome" in raw else "criteria")
        outcome = raw.get(outcome_key, "")
        if not isinstance(outcome, str):
            # AgentV reads the criteria as text only (`asString`): a number or true/false is no criteria there
            # (the judge sees none, or the test is skipped); its text was what the judge graded against here
            raise EvalFileError(line_of(outcome, key_line(raw, outcome_key, line)),
                                f"'{outcome_key}' must be text, got {yaml_kind(outcome)}", "a string (quote a number)")
        if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
            raise EvalFileError(line_of(reference, key_line(raw, "reference_answer", line)),
                                "'reference_answer' must be text", "a string")

        generation = _case_generation(decided, four_x)
        evaluators = self._evaluators(raw, execution, line, skips_defaults=skips_defaults, four_x=four_x,
                                      generation=generation)
        conversation = parse_conversation(raw, line, self.file, self.problems, self._turn_evaluators, reference_text)
        if not str(outcome).strip() and not expected_messages and not evaluators and conversation is None:
            raise EvalFileError(line, f"case '{case_id}' has nothing to judge against",
                                "'criteria' (or 'expected_outcome'), 'expected_output', or evaluators")

        metadata = raw.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            # Code judges and hooks get it as `metadata`/`case_metadata`; AgentV drops any other value.
            raise EvalFileError(line_of(metadata, key_line(raw, "metadata", line)),
                                f"'metadata' must be a mapping, got {yaml_kind(metadata)}", "metadata: {key: value}")
        odd_key = next((key for key in metadata or {} if not isinstance(key, str)), None)
        if odd_key is not None:  # YAML reads `1:` or `true:` as a number or boolean; a JSON payload's keys are text
            raise EvalFileError(key_line(metadata, odd_key, line),
                                f"'metadata' key {odd_key!r} is {yaml_kind(odd_key)}, not text",
                                f"metadata: {{'{odd_key}': ...}} (quoted)")
        if four_x:  # 4.x hands the suite's metadata (and governance) to every case
            metadata = merge_metadata(metadata, self.defaults.get("metadata_payload"))
        # A `threshold:` left blank is not written (AgentV: `evalCase.threshold ?? suite's`): the
        # suite's holds, rather than --threshold's default that a lower score meets.
        written = raw.get("threshold")
        if written is None:
            written = execution.get("threshold")
        threshold = parse_threshold(written if written is not None else self.defaults.get("threshold"),
                                    key_line(raw, "threshold", key_line(execution, "threshold", line)))
        blank = blank_target_line(raw, execution)
        if blank is not None:
            raise EvalFileError(blank, BLANK_TARGET, "target: a name in targets.yaml, or no 'target' for the default")
        target = raw.get("target", execution.get("target", self.defaults.get("target")))
        target_line = (key_line(raw, "target") if "target" in raw else key_line(execution, "target")
                       if "target" in execution else self.defaults.get("target_line"))
        trials = (parse_trials(execution["trials"], key_line(execution, "trials", line)) if "trials" in execution
                  else self.defaults.get("trials"))
        cost_limits = list(self.defaults.get("cost_limits", []))
        if trials is not None and trials.cost_limit_usd is not None:
            cost_limits.append(("cost_limit_usd", self.file, key_line(execution["trials"], "cost_limit_usd"))
                               if "trials" in execution else self.defaults["trials_cost_limit"])
        targets = self.defaults.get("targets")
        if "targets" in execution:
            targets = parse_targets(execution["targets"], key_line(execution, "targets", line))
            target_line = key_line(execution, "targets", line)
        elif targets and "target" not in raw and "target" not in execution:
            target_line = self.defaults.get("targets_line")
        else:
            targets = None if ("target" in raw or "target" in execution) else targets
        workspace = parse_workspace(raw.get("workspace"), key_line(raw, "workspace", line), self.roots, self.file,
                                    self.problems, suite=False, inherited=self.defaults.get("workspace"))
        if raw.get("workspace") == {"template": str(self.file.parent / "workspace")} and (
                workspace is None or workspace.isolation != "per_test"):
            # a case folder's `workspace/` (case_folders.py): 4.42 makes the first case's the suite's shared
            # workspace unless `isolation: per_test` (then each case gets a copy of its own folder's)
            self.problems.append(Problem(self.file, key_line(raw, "workspace", line), not_yet_message(
                "template", "a case folder's workspace/ template, which AgentV 4.42 shares between the suite's "
                "cases unless isolation: per_test")))
        if workspace is not None and workspace.resets and _case_generation(decided, four_x) == "2.x":
            for _mode, where, at in workspace.resets.values():
                if (where, at) not in self._reset_warned:
                    self._reset_warned.add((where, at))
                    self.problems.append(no_effect(where, at, "reset", RESET_IN_2X))
        if workspace is not None and workspace.repos and _case_generation(decided, four_x) == "2.x":
            first = workspace.repos[0]
            if (first.source_file, first.source_line) not in self._reset_warned:
                self._reset_warned.add((first.source_file, first.source_line))
                self.problems.append(Problem(first.source_file, first.source_line, not_yet_message(
                    "repos", "AgentV 4.x's repository form (repo:) in an AgentV 2.x file")))
        if workspace is not None and workspace.isolation_at is not None and \
                _case_generation(decided, four_x) == "2.x" and workspace.isolation_at not in self._reset_warned:
            self._reset_warned.add(workspace.isolation_at)
            self.problems.append(Problem(*workspace.isolation_at, not_yet_message(
                "isolation", "workspace isolation in an AgentV 2.x file")))
        depends_on, on_dependency_failure = parse_depends_on(raw, line)

        return EvalCase(
            id=case_id,
            source_file=self.file,
            source_line=line,
            suite=self.suite,
            suite_file=self.suite_file,
            case_file=self.case_file,
            dataset=self.defaults.get("dataset"),
            question=question,
            input_messages=input_messages,
            expected_outcome=str(outcome or ""),
            expected_messages=expected_messages,
            reference_answer=str(reference or ""),
            guideline_files=files["guideline"],
            input_files=files["input"],
            evaluators=evaluators,
            threshold=threshold,
            target=str(target) if target else None,
            target_line=target_line,
            conversation_id=_conversation_id(raw.get("conversation_id"), key_line(raw, "conversation_id", line)),
            metadata=metadata,
            trials=trials,
            targets=targets,
            suite_execution=self.suite_execution,
            workspace=workspace,
            cost_limits=cost_limits,
            suite_tags=list(self.defaults.get("tags") or []),
            conversation=conversation,
            depends_on=list(depends_on),
            on_dependency_failure=on_dependency_failure,
            generation=generation,
            generation_reason=decided.reason if decided is not None else "",
            preprocessors=list(self.defaults.get("preprocessors") or []) if generation == "4.x" else [],
            files_root=None if self.roots.allow_outside_root else self.roots.repo_root,
        )


def _case_generation(decided: Any, four_x: bool) -> Generation:
    """A pinned file's generation wins (file_generation.py); otherwise the case's own forms, then the file's signs."""
    if decided is not None and (decided.pinned or not four_x):
        return cast(Generation, decided.generation)
    return "4.x" if four_x else "2.x"


def _agentv_segment(segment: dict[str, Any]) -> dict[str, Any]:
    """A resolved segment as AgentV's processExpectedMessages keeps it: a file as `{type, path, text,
    resolvedPath}` (what was written is not kept), any other segment as written."""
    if segment.get("type") != "file":
        return segment
    return {"type": "file", "path": segment.get("path"), "text": segment.get("text"),
            "resolvedPath": segment.get("resolved_path")}


def reference_text(expected: list[Message]) -> str:
    """AgentV's reference answer, from the last expected message: its content when text; a content list as
    `JSON.stringify(segments, null, 2)` (segments that are not mappings dropped, as AgentV drops them); with no
    content, its tool calls as JSON."""
    if not expected:
        return ""
    last = expected[-1]
    tool_calls = (last.model_extra or {}).get("tool_calls")
    if last.content in (None, "") and tool_calls:  # `content` left out is "": the tool calls are the answer
        return json.dumps(tool_calls, indent=2, default=str, ensure_ascii=False)
    if isinstance(last.content, str):
        return last.content
    if isinstance(last.content, list):
        segments = [_agentv_segment(seg) for seg in last.content if isinstance(seg, dict)]
        return json.dumps(segments, indent=2, default=str, ensure_ascii=False)
    return json.dumps(last.content, indent=2, default=str)  # YAML dates become text


def mapping(value: Any) -> dict[str, Any]:
    """An optional mapping field (`execution:` and the like) as a dict, absent or not."""
    return value if isinstance(value, dict) else {}


def _conversation_id(value: Any, line: int) -> str | None:
    if value is None or (isinstance(value, (str, int)) and not isinstance(value, bool)):
        return None if value is None else str(value)
    raise EvalFileError(line_of(value, line), f"conversation_id {value!r} is not text", "a string")


def parse_threshold(value: Any, line: int) -> float | None:
    """A pass mark in 0..1, or None when not written; anything else is refused at `line`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= float(value) <= 1:
        raise EvalFileError(line_of(value, line), f"threshold {value!r} is not a number in 0..1", "a number from 0 to 1")
    return float(value)


__all__ = ["CaseBuilder", "is_guideline", "parse_threshold", "question_text", "reference_text"]
