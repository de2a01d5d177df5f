"""What findings become on the client: diagnostics, quick fixes (each fix, then ``# noqa``) and the
"fix all" source action, built from what an analysis published (``Published``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lsprotocol import types

from ...cache import SummaryCache, content_digest
from ...core.findings import Edit, Finding, Severity
from ...core.locations import Location
from ...core.paths import real_path
from ...core.settings import DEFAULT_RULE_DOCS_URL
from ...core.text import split_lines
from ...fixes import Changes as FixChanges
from ...fixes import PlanError as FixPlanError
from ...fixes import Sources as FixSources
from ...fixes import ops_for as fix_ops
from ...fixes.noqa import plan_noqa
from ...output.confirm_view import confirm_text, confirm_to_dict
from ...output.escape import printable
from ...rules import RULES_BY_CODE
from .documents import Document, Files, Snapshot
from .positions import LineTable, lsp_range

SOURCE = "compile-ad-lint"
#: The "fix all" source action's kind (clients ask for ``source.fixAll``, e.g. on save).
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"

_SEVERITIES = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


def to_diagnostic(finding: Finding, files: Files, docs_url: str = DEFAULT_RULE_DOCS_URL) -> types.Diagnostic:
    rule = RULES_BY_CODE.get(finding.code)
    related = []
    for item in finding.related:
        uri, table = files.of(item.location)
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=lsp_range(item.location, table)),
                message=item.message,
            )
        )
    return types.Diagnostic(
        range=lsp_range(finding.location, files.of(finding.location)[1]),
        severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Error),
        code=finding.code,
        code_description=types.CodeDescription(href=rule.docs_url(docs_url)) if rule is not None else None,
        source=SOURCE,
        message=message_of(finding),
        related_information=related or None,
        data={"confirm": confirm_to_dict(finding)} if finding.confirm else None,
    )


# -- code actions -----------------------------------------------------------------------


def code_actions(
    params: types.CodeActionParams, document: Document, published: Published | None, files: Files
) -> list[types.CodeAction]:
    """Quick fixes for the diagnostics asked about: each fix (preferred first), then the ``# noqa``
    suppression; and a "fix all" source action for the document's safe fixes. ``published``: what
    was published for the document, with its fix edits, while it is current (else None: only
    ``# noqa`` is offered)."""
    uri = params.text_document.uri
    only = params.context.only
    actions = []
    current = published is not None
    if wanted(only, types.CodeActionKind.QuickFix):
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != SOURCE or not isinstance(diagnostic.code, str):
                continue
            if current:
                assert published is not None
                for finding in published.findings:
                    if (
                        finding.code != diagnostic.code
                        or lsp_range(finding.location, document.line_table) != diagnostic.range
                    ):
                        continue
                    for number, fix in enumerate(finding.fixes):
                        edit = workspace_edit(fix.edits, files, published)
                        if edit is not None:
                            actions.append(
                                types.CodeAction(
                                    title=fix.description,
                                    kind=types.CodeActionKind.QuickFix,
                                    diagnostics=[diagnostic],
                                    edit=edit,
                                    is_preferred=(number == 0 and fix.safe) or None,
                                )
                            )
                    break
            noqa = noqa_edit(document.line_table, diagnostic.range.start.line, diagnostic.code)
            if noqa is not None:
                actions.append(
                    types.CodeAction(
                        title=f"Suppress {diagnostic.code} on this line (# noqa: {diagnostic.code})",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=types.WorkspaceEdit(changes={uri: [noqa]}),
                    )
                )
    if current and wanted(only, FIX_ALL_KIND):
        assert published is not None
        fix_all = fix_all_action(published, files)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def fix_all_action(published: Published, files: Files) -> types.CodeAction | None:
    """Every safe fix of the document's findings, applied together (overlapping ones left out)."""
    safe = [
        f for f in published.findings if f.fix is not None and f.fix.safe and f.fix.plan is not None and f.fix.edits
    ]
    if not safe:
        return None
    sources = FixSources(published.snapshot.sources, published.digests)
    changes = FixChanges(sources)
    for finding in safe:
        try:
            changes.add(fix_ops(finding.fix.plan, sources))  # type: ignore[union-attr, arg-type]
        except FixPlanError:
            continue
    try:
        edits = changes.edits()
    except FixPlanError:
        return None
    edit = workspace_edit(edits, files, published)
    if edit is None:
        return None
    return types.CodeAction(title=f"{SOURCE}: apply every safe fix in this file", kind=FIX_ALL_KIND, edit=edit)


def workspace_edit(edits: tuple[Edit, ...], files: Files, published: Published) -> types.WorkspaceEdit | None:
    """The edits as a WorkspaceEdit (files other than the document included); None when a file
    they touch no longer holds what was analyzed."""
    if not edits:
        return None
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        uri, table = files.get(edit.path)
        if table is None or published.digests.get(str(real_path(edit.path))) != content_digest(
            table.text.encode("utf-8", "surrogatepass")
        ):
            return None
        where = Location(edit.path, edit.line, edit.column, edit.end_line, edit.end_column)
        changes.setdefault(uri, []).append(types.TextEdit(range=lsp_range(where, table), new_text=edit.replacement))
    return types.WorkspaceEdit(changes=changes)


def message_of(finding: Finding) -> str:
    """The diagnostic's message: the finding's headline and details, then its confirm verdicts (which say what ran: the
    project's code or a synthetic probe), when a confirm run attached any."""
    verdicts = confirm_text(finding)
    # The headline first (what flake8 and the text report's line show), the details under it.
    message = "\n".join([finding.message, *finding.details])
    return f"{message}\nconfirm: {printable(verdicts)}" if verdicts else message


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a client's ``only`` filter asks for ``kind`` (``source.fixAll`` covers ``source.fixAll.x``)."""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


@dataclass(frozen=True)
class Published:
    """The findings published for one document, the analysis's snapshot and the digests of the
    files it read: fixes are offered only while both still hold. Their edits are built after the
    diagnostics are published (``resolved``), from ``cache`` where no file they read changed."""

    snapshot: Snapshot
    findings: tuple[Finding, ...]
    digests: Mapping[str, str]
    cache: SummaryCache | None = None
    resolved: bool = False


def noqa_edit(table: LineTable, line: int, code: str) -> types.TextEdit | None:
    """The edit that adds ``code`` to ``line``'s noqa comment (or adds one); None if there is nothing
    to do. The grammar, and the tokenizer that finds comments, are the analyzer's (``fixes.noqa``)."""
    if not 0 <= line < table.line_count:
        return None
    edits, _ = plan_noqa(split_lines(table.text), {line + 1: [code]})
    if not edits:
        return None
    edit = edits[0]
    return types.TextEdit(
        range=types.Range(table.position(line, edit.start), table.position(line, edit.end)), new_text=edit.text
    )
